import { FirewallRule } from '../../domain/firewall-rule';
import { SshKey } from '../../domain/ssh-key';
import { EffectiveFirewall } from '../../application/firewall-rules.use-cases';
import { FirewallRuleResponse, ServerFirewallResponse, SshKeyResponse } from './access.openapi';

export const presentSshKey = (k: SshKey): SshKeyResponse => ({
  id: k.id, name: k.name, fingerprint: k.fingerprint, public_key: k.publicKey, created_at: k.createdAt.toISOString(),
});

export const presentFirewallRule = (r: FirewallRule): FirewallRuleResponse => ({
  id: r.id, direction: r.direction, protocol: r.protocol, port: r.port, sources: r.sources, destinations: r.destinations,
  server_id: r.serverId, description: r.description, created_at: r.createdAt.toISOString(),
});

export function presentFirewall(f: EffectiveFirewall): ServerFirewallResponse {
  const out: ServerFirewallResponse = {
    server_id: f.serverId, inbound_default: f.inboundDefault, outbound_default: f.outboundDefault, rules: f.rules.map(presentFirewallRule),
  };
  if (f.verdict) out.verdict = { allowed: f.verdict.allowed, rule_id: f.verdict.ruleId };
  return out;
}
