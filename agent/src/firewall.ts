import { isIP } from 'node:net';
import { AgentFirewallRule } from '../../src/shared/agent-protocol/agent-protocol';
import { invalidRequest } from './errors';

/** The nftables table inside each server's network namespace. */
export const FIREWALL_TABLE = 'cloud_disk_firewall';

const PORT = /^[1-9]\d{0,4}(-[1-9]\d{0,4})?$/;

function cidr(text: unknown): { family: 4 | 6; text: string } {
  if (typeof text !== 'string') throw invalidRequest('a firewall address must be a CIDR string');
  const [address, prefix, extra] = text.split('/');
  const family = isIP(address ?? '');
  const max = family === 4 ? 32 : 128;
  if (extra !== undefined || family === 0 || prefix === undefined || !/^\d{1,3}$/.test(prefix) || Number(prefix) > max) {
    throw invalidRequest(`${text} is not a CIDR such as 10.0.0.0/8`);
  }
  return { family: family as 4 | 6, text: `${address}/${Number(prefix)}` };
}

/** Checks the rules of a PUT …/firewall (the service sends them canonical; the agent trusts no shape). */
export function parseRules(body: unknown): AgentFirewallRule[] {
  const rules = (body as { rules?: unknown })?.rules;
  if (!Array.isArray(rules) || rules.length > 500) throw invalidRequest('rules must be a list of at most 500 rules');
  return rules.map((r: Partial<AgentFirewallRule>) => {
    if (r.direction !== 'in' && r.direction !== 'out') throw invalidRequest('direction must be in or out');
    if (r.protocol !== 'tcp' && r.protocol !== 'udp' && r.protocol !== 'icmp') throw invalidRequest('protocol must be tcp, udp or icmp');
    if (r.protocol === 'icmp' ? r.port !== null : typeof r.port !== 'string' || !PORT.test(r.port)) throw invalidRequest('port must be "N" or "N-M" for tcp and udp, null for icmp');
    if (!Array.isArray(r.addresses) || r.addresses.length === 0 || r.addresses.length > 100) throw invalidRequest('addresses must be 1 to 100 CIDRs');
    return { direction: r.direction, protocol: r.protocol, port: r.port ?? null, addresses: r.addresses.map((a) => cidr(a).text) };
  });
}

function ruleLines(rule: AgentFirewallRule): string[] {
  const field = rule.direction === 'in' ? 'saddr' : 'daddr';
  const lines: string[] = [];
  for (const family of [4, 6] as const) {
    const addresses = rule.addresses.filter((a) => cidr(a).family === family);
    if (addresses.length === 0) continue;
    const match = `${family === 4 ? 'ip' : 'ip6'} ${field} { ${addresses.join(', ')} }`;
    if (rule.protocol === 'icmp') lines.push(`${match} meta l4proto ${family === 4 ? 'icmp' : 'ipv6-icmp'} accept`);
    else lines.push(`${match} ${rule.protocol} dport ${rule.port} accept`);
  }
  return lines;
}

/**
 * The server's ruleset (servers.md "Semantics": allow-only, stateful): inbound denied unless a rule
 * allows; outbound allowed until an out rule exists, then only what out rules allow; replies and
 * the loopback always pass; IPv6 neighbour discovery passes (the link needs it). What is denied is
 * rejected (ICMP administratively prohibited), so a client learns at once rather than timing out.
 * The file replaces the table whole (an nft -f of it is atomic).
 */
export function renderRuleset(rules: AgentFirewallRule[]): string {
  const inbound = rules.filter((r) => r.direction === 'in').flatMap(ruleLines);
  const outRules = rules.filter((r) => r.direction === 'out');
  const outbound = outRules.flatMap(ruleLines);
  const base = [
    '    iifname "lo" accept',
    '    ct state established,related accept',
    '    ct state invalid drop',
    '    icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert, nd-router-advert } accept',
  ];
  return [
    `table inet ${FIREWALL_TABLE}`,
    `delete table inet ${FIREWALL_TABLE}`,
    `table inet ${FIREWALL_TABLE} {`,
    '  chain input {',
    '    type filter hook input priority 0; policy drop;',
    ...base,
    ...inbound.map((l) => `    ${l}`),
    '    reject with icmpx type admin-prohibited',
    '  }',
    '  chain output {',
    `    type filter hook output priority 0; policy ${outRules.length ? 'drop' : 'accept'};`,
    ...(outRules.length ? [...base.map((l) => l.replace('iifname', 'oifname')), ...outbound.map((l) => `    ${l}`), '    reject with icmpx type admin-prohibited'] : []),
    '  }',
    '}',
    '',
  ].join('\n');
}
