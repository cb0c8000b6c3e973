import { SshKeyType } from './ssh-public-key';

/** An SSH public key of an organization (servers.md): injected into servers at their creation only. */
export interface SshKey {
  id: string;
  orgId: string;
  name: string;
  type: SshKeyType;
  fingerprint: string;
  /** The OpenSSH line as stored: trimmed, single spaces between fields, the comment kept. */
  publicKey: string;
  createdAt: Date;
}

export const MAX_SSH_KEYS_PER_ORG = 100;
export const MAX_FIREWALL_RULES_PER_ORG = 100;
