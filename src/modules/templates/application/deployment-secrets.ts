import { Injectable } from '@nestjs/common';
import { Settings } from '../../../shared/config/settings';
import { SecretPurpose, openSecret, sealSecret } from '../../webhooks/domain/secret-box';

/**
 * A deployment's secret variables at rest: one sealed JSON map per deployment (or per accepted
 * update), AES-256-GCM under HKDF-SHA256 of DEPLOYMENT_SECRETS_KEY (the box webhook signing
 * secrets use, under its own purpose), the deployment's id as associated data (a sealed map
 * moved to another deployment does not open). None: null.
 */
const PURPOSE: SecretPurpose = { info: 'cds deployment secret variables v1', publicKey: 'cloud-disk-service deployment secrets, no server key set' };

@Injectable()
export class DeploymentSecrets {
  constructor(private readonly settings: Settings) {}

  seal(deploymentId: string, secrets: Record<string, string>): string | null {
    if (Object.keys(secrets).length === 0) return null;
    return sealSecret(JSON.stringify(secrets), deploymentId, this.settings.deploymentSecretsKey, PURPOSE);
  }

  /** Throws when it does not open (another DEPLOYMENT_SECRETS_KEY, or a tampered row). */
  open(deploymentId: string, sealed: string | null): Record<string, string> {
    if (sealed === null) return {};
    return JSON.parse(openSecret(sealed, deploymentId, this.settings.deploymentSecretsKey, PURPOSE)) as Record<string, string>;
  }
}
