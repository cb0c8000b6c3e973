import { Settings } from '../../shared/config/settings';
import { AutoRenewSetting, checkAutoRenew } from '../prepaid/domain/auto-renew';
import { RENEWAL_TERMS } from '../prepaid/domain/term';
import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../shared/database/unit-of-work';
import { Clock, addMonthsClamped } from '../../shared/kernel/clock/clock';
import { DomainError, conflict, invalidRequest } from '../../shared/kernel/errors/domain-error';
import { newId } from '../../shared/kernel/ids/ids';
import { Money, isCurrency } from '../../shared/kernel/money/money';
import { Accounts } from '../auth/application/accounts.port';
import { CreateApiKey, OPERATOR } from '../auth/application/api-keys.use-cases';
import { normalizeEmail } from '../auth/domain/email';
import { hashPassword } from '../auth/domain/tokens';
import { Catalog } from '../options/application/catalog.port';
import { VolumeOffer, VolumeType } from '../options/domain/catalog';
import { expandReservedIpv4Pool } from '../options/domain/reserved-ipv4-pool';
import { SeededDisks } from '../storage-provider/application/seeded-disks.port';
import { NewVolume, ServerRepository, VolumeRepository } from '../volumes/application/volumes.port';
import { Volume, termPrice } from '../volumes/domain/volume';
import { WalletLedger } from '../wallet/application/wallet.port';
import { ServerCatalogQueries } from '../options/application/server-catalog-queries.port';
import { ComputeProvider } from '../servers/application/compute-provider.port';
import { ServerLifecycle } from '../servers/application/server-lifecycle.port';
import { termAmount } from '../prepaid/domain/term';
import { TemplateCatalog } from '../templates/application/template-catalog.port';
import { Template } from '../templates/domain/template';
import { SeedFile, SeedOrganization, SeedServer, SeedTemplate } from './seed-file';
import { parseIpv6Prefix } from '../servers/domain/network';

/** A seed file's template, checked beyond its shape: distinct versions and variable names (400 naming the member). */
function seedTemplate(t: SeedTemplate, i: number): Template {
  const at = `templates[${i}]`;
  const dupVersion = t.versions.find((v, k) => t.versions.indexOf(v) !== k);
  if (dupVersion !== undefined) throw invalidRequest(`Seed file: ${at}.versions: ${dupVersion} is listed twice`, { field: `${at}.versions` });
  const names = t.variables.map((v) => v.name);
  const dupName = names.find((n, k) => names.indexOf(n) !== k);
  if (dupName !== undefined) throw invalidRequest(`Seed file: ${at}.variables: ${dupName} is declared twice`, { field: `${at}.variables` });
  return {
    id: t.id,
    name: t.name,
    versions: [...t.versions],
    variables: t.variables.map((v) => ({ name: v.name, description: v.description, required: v.required, secret: v.secret })),
    simulate: t.simulate ? { deploy: t.simulate.deploy ?? 'ok', health: t.simulate.health ?? 'healthy' } : null,
  };
}

/** Volumes per INSERT statement of a seed file (20 parameters each: PostgreSQL takes at most 65,535). */
const VOLUMES_PER_STATEMENT = 1000;
const PASSWORD_MIN = 8;
const PASSWORD_MAX = 200;
/** A new user's password: 8 to 200 characters, as signup asks. */
const validNewPassword = (password: string): boolean => password.length >= PASSWORD_MIN && password.length <= PASSWORD_MAX;

export interface SeedResult {
  regions: string[];
  server_plans: string[];
  images: string[];
  templates: string[];
  organizations: {
    id: string;
    users: { id: string; email: string }[];
    api_keys: { id: string; name: string; token: string }[];
    servers: string[];
    volumes: string[];
  }[];
}

/** Loads a seed file (seed-format.md) in one transaction: all of it, or nothing. */
@Injectable()
export class LoadSeed {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly catalog: Catalog,
    private readonly accounts: Accounts,
    private readonly createApiKey: CreateApiKey,
    private readonly servers: ServerRepository,
    private readonly volumes: VolumeRepository,
    private readonly wallet: WalletLedger,
    private readonly clock: Clock,
    private readonly seededDisks: SeededDisks,
    private readonly templates: TemplateCatalog,
    private readonly settings: Settings,
    private readonly serverOffers: ServerCatalogQueries,
    private readonly serverLifecycle: ServerLifecycle,
    private readonly compute: ComputeProvider,
  ) {}

  /**
   * terms.md "Seed file": a server with `plan` is a bought one, as a purchase over the API leaves
   * it once its vm.create has succeeded: the plan's specs, the region offer's price (frozen for its
   * renewals), `billing` for `term_months` in `currency`, `expires_at` (default now + the term),
   * `auto_renew`; its vCPUs counted in the region (the counter's CHECK refuses a region without
   * room), its instance created, booted and running at the compute provider (no inbound traffic
   * until firewall rules say so, as a new instance), then `running` with the instance's IPv4.
   * Nothing is charged: the seed's wallet is the balance after the purchase. The instance is made
   * inside the seed's transaction; a seed that fails afterwards leaves it to the orphan sweep.
   */
  private async createBoughtServer(orgId: string, at: string, server: SeedServer & { plan: string }, id: string, now: Date): Promise<void> {
    const offer = await this.serverOffers.offerSnapshot(server.region);
    if (!offer || offer.terms === null) throw invalidRequest(`Seed file: ${at}.plan: region ${server.region} sells no servers`, { field: `${at}.plan` });
    const plan = offer.plans.find((p) => p.id === server.plan);
    if (!plan) throw invalidRequest(`Seed file: ${at}.plan: plan ${server.plan} is not sold in ${server.region}`, { field: `${at}.plan` });
    for (const member of ['image', 'term_months', 'currency'] as const) {
      if (server[member] === undefined) throw invalidRequest(`Seed file: ${at}.${member} is required for a bought server (one with plan)`, { field: `${at}.${member}` });
    }
    if (!offer.images.some((i) => i.id === server.image)) throw invalidRequest(`Seed file: ${at}.image: image ${server.image} is not in the catalog`, { field: `${at}.image` });
    if (!offer.terms.includes(server.term_months!)) {
      throw invalidRequest(`Seed file: ${at}.term_months must be one of the terms sold for servers in ${server.region}: ${offer.terms.join(', ')}`, { field: `${at}.term_months` });
    }
    const expiresAt = server.expires_at ? new Date(server.expires_at) : addMonthsClamped(now, server.term_months!);
    await this.serverLifecycle.insert({
      id,
      orgId,
      name: server.name,
      regionId: server.region,
      zoneId: server.zone,
      planId: plan.id,
      vcpus: plan.vcpus,
      memoryGb: plan.memoryGb,
      diskGb: plan.diskGb,
      image: server.image!,
      termMonths: server.term_months!,
      billing: termAmount(plan.price, server.currency!, server.term_months!),
      price: { USD: plan.price.USD, IDR: plan.price.IDR },
      expiresAt,
      // seed-format.md has no labels, delete_protection or SSH keys for servers: the defaults of a purchase.
      labels: {},
      deleteProtection: false,
      sshKeyIds: [],
      createdAt: now,
      ...(server.auto_renew === undefined ? {} : { autoRenew: this.autoRenewOf(server.auto_renew, `server ${server.name}`) }),
    });
    const step = `seed/${id}`;
    const instance = await this.compute.createInstance({
      serverId: id,
      step: `${step}/creating_instance`,
      hostname: server.name,
      zoneId: server.zone,
      vcpus: plan.vcpus,
      memoryGb: plan.memoryGb,
      diskGb: plan.diskGb,
      image: server.image!,
      sshPublicKeys: [],
      userData: null,
    });
    // Its /64 (chosen from the region's prefix when the row was inserted) routed to it, as a purchase's.
    const ipv6 = (await this.serverLifecycle.lock(id))?.ipv6;
    if (ipv6) await this.compute.assignIpv6({ serverId: id, step: `${step}/ipv6`, ipv6 });
    await this.compute.awaitBoot({ serverId: id, step: `${step}/booting` });
    await this.compute.applyFirewall({ serverId: id, rules: [] });
    await this.serverLifecycle.markReady(id, instance.ipv4, expiresAt);
  }

  /** terms.md: a seeded resource's `auto_renew`, checked as a purchase's (400 naming the member). */
  private autoRenewOf(value: unknown, what: string): AutoRenewSetting {
    try {
      const a = checkAutoRenew(value, RENEWAL_TERMS);
      return { enabled: a.enabled, termMonths: a.termMonths ?? null, leadS: this.settings.autoRenewLeadS };
    } catch (err) {
      if (err instanceof DomainError) throw invalidRequest(`Seed file: ${what}: ${err.message}`, err.details);
      throw err;
    }
  }

  async execute(seed: SeedFile): Promise<SeedResult> {
    // Hash passwords before the transaction: scrypt is slow and needs no lock. Only those a new
    // user may have: whether a member is new is known in the transaction (else its password is ignored).
    const passwordHashes = new Map<string, string>();
    for (const org of seed.organizations) {
      for (const m of org.members) {
        if (validNewPassword(m.password)) passwordHashes.set(m.password, passwordHashes.get(m.password) ?? (await hashPassword(m.password)));
      }
    }
    return this.uow.run(async () => {
      const result: SeedResult = { regions: [], server_plans: [], images: [], templates: [], organizations: [] };
      // Plans and images first: the regions' server offers name plans.
      for (const plan of seed.server_plans ?? []) {
        await this.catalog.createServerPlan({ id: plan.id, vcpus: plan.vcpus, memoryGb: plan.memory_gb, diskGb: plan.disk_gb });
        result.server_plans.push(plan.id);
      }
      for (const image of seed.images ?? []) {
        await this.catalog.createImage({ id: image.id, name: image.name, type: image.type });
        result.images.push(image.id);
      }
      for (const [i, template] of (seed.templates ?? []).entries()) {
        await this.templates.create(seedTemplate(template, i));
        result.templates.push(template.id);
      }
      // Offers and zones read once per file, not once per volume (the catalog does not change
      // inside this transaction except through the regions created above, which come first).
      const lookups = new CatalogLookups(this.catalog);
      for (const region of seed.regions) {
        const serverOffer = region.server_offer;
        for (const [p, offered] of (serverOffer?.plans ?? []).entries()) {
          const field = `regions.${region.id}.server_offer.plans[${p}].plan`;
          if (serverOffer!.plans.findIndex((o) => o.plan === offered.plan) !== p) {
            throw invalidRequest(`Seed file: ${field}: plan ${offered.plan} is offered twice`, { field });
          }
          if (!(await this.catalog.serverPlanExists(offered.plan))) {
            throw invalidRequest(`Seed file: ${field}: ${offered.plan} is no server plan (list it in server_plans)`, { field });
          }
        }
        await this.catalog.createRegion({
          id: region.id,
          name: region.name,
          capacityGb: region.capacity_gb,
          zones: region.zones.map((z) => ({ id: z.id, available: z.available })),
          offers: region.volume_offers.map((o, i) => ({
            type: o.type,
            minGb: o.min_gb,
            maxGb: o.max_gb,
            stepGb: o.step_gb,
            terms: o.terms,
            perServerLimit: o.per_server_limit,
            price: {
              USD: Money.parse(o.price_per_gb_month.USD, 'USD', `regions.${region.id}.volume_offers[${i}].price_per_gb_month.USD`),
              IDR: Money.parse(o.price_per_gb_month.IDR, 'IDR', `regions.${region.id}.volume_offers[${i}].price_per_gb_month.IDR`),
            },
          })),
          serverOffer: serverOffer && {
            vcpuCapacity: serverOffer.vcpu_capacity,
            terms: serverOffer.terms,
            plans: serverOffer.plans.map((o, p) => ({
              planId: o.plan,
              price: {
                USD: Money.parse(o.price_per_month.USD, 'USD', `regions.${region.id}.server_offer.plans[${p}].price_per_month.USD`),
                IDR: Money.parse(o.price_per_month.IDR, 'IDR', `regions.${region.id}.server_offer.plans[${p}].price_per_month.IDR`),
              },
            })),
          },
          snapshotPrice: region.snapshot_price_per_gb_month && {
            USD: Money.parse(region.snapshot_price_per_gb_month.USD, 'USD', `regions.${region.id}.snapshot_price_per_gb_month.USD`),
            IDR: Money.parse(region.snapshot_price_per_gb_month.IDR, 'IDR', `regions.${region.id}.snapshot_price_per_gb_month.IDR`),
          },
          reservedIpv4: reservedIpv4Offer(region),
          ipv6Prefix: region.ipv6_prefix === undefined ? undefined : parseIpv6Prefix(region.ipv6_prefix, `regions.${region.id}.ipv6_prefix`),
        });
        result.regions.push(region.id);
      }
      for (const [i, org] of seed.organizations.entries()) {
        const loaded = await this.loadOrganization(org, i, passwordHashes, lookups);
        // Their disks exist at the storage provider (the simulated one records them).
        await this.seededDisks.adopt(loaded.volumes);
        result.organizations.push(loaded);
      }
      return result;
    });
  }

  private async loadOrganization(
    org: SeedOrganization,
    index: number,
    passwordHashes: Map<string, string>,
    lookups: CatalogLookups,
  ): Promise<SeedResult['organizations'][number]> {
    const orgId = org.id ?? newId('org');
    if (await this.accounts.organizationExists(orgId)) throw conflict(`Organization ${orgId} exists already`);
    await this.accounts.createOrganization({ id: orgId, name: org.name });
    const out: SeedResult['organizations'][number] = { id: orgId, users: [], api_keys: [], servers: [], volumes: [] };

    for (const [currency, amount] of Object.entries(org.wallet ?? {})) {
      // The parsed wallet carries every currency member, undefined when the file leaves it out.
      if (amount === undefined) continue;
      if (!isCurrency(currency)) throw invalidRequest(`Seed file: organizations.${orgId}.wallet: unknown currency ${currency}`);
      const money = Money.parse(amount, currency, `organizations.${orgId}.wallet.${currency}`);
      if (money.minor > 0n) await this.wallet.credit(orgId, money, 'seed');
    }
    for (const [m, member] of org.members.entries()) {
      const email = normalizeEmail(member.email, `organizations.${orgId}.members.email`);
      let user = await this.accounts.findUserByEmail(email);
      if (!user) {
        const passwordHash = passwordHashes.get(member.password);
        if (!validNewPassword(member.password) || !passwordHash) {
          const field = `organizations[${index}].members[${m}].password`;
          throw invalidRequest(`Seed file: ${field} must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters (${email} is a new user)`, { field });
        }
        user = await this.accounts.createUser({ id: newId('usr'), email, passwordHash });
      }
      await this.accounts.addMember(orgId, user.id, member.role);
      out.users.push({ id: user.id, email: user.email });
    }
    for (const key of org.api_keys) {
      const created = await this.createApiKey.execute({ orgId, name: key.name, scopes: key.scopes, token: key.token }, OPERATOR);
      out.api_keys.push({ id: created.key.id, name: created.key.name, token: created.token });
    }
    const now = this.clock.now();
    for (const [s, server] of org.servers.entries()) {
      if (!(await lookups.zoneInRegion(server.region, server.zone))) {
        throw invalidRequest(`Seed file: server ${server.name}: zone ${server.zone} is not in region ${server.region}`);
      }
      const at = `organizations[${index}].servers[${s}]`;
      if (server.plan !== undefined) {
        const id = server.id ?? newId('vm');
        await this.createBoughtServer(orgId, at, { ...server, plan: server.plan }, id, now);
        out.servers.push(id);
        continue;
      }
      const bought = (['image', 'term_months', 'currency', 'expires_at', 'auto_renew'] as const).find((m) => server[m] !== undefined);
      if (bought) throw invalidRequest(`Seed file: ${at}.${bought} is for a bought server: give its plan too`, { field: `${at}.${bought}` });
      const created = await this.servers.create({ id: server.id ?? newId('vm'), orgId, name: server.name, regionId: server.region, zoneId: server.zone });
      out.servers.push(created.id);
    }
    const batch: NewVolume[] = [];
    for (const v of org.volumes) {
      const offer = await lookups.offer(v.region, v.type);
      if (!offer) throw invalidRequest(`Seed file: volume ${v.name}: region ${v.region} sells no ${v.type} volumes`);
      if (!(await lookups.zoneInRegion(v.region, v.zone))) {
        throw invalidRequest(`Seed file: volume ${v.name}: zone ${v.zone} is not in region ${v.region}`);
      }
      if (v.server) {
        const server = await this.servers.findInOrg(orgId, v.server);
        if (!server) throw invalidRequest(`Seed file: volume ${v.name}: server ${v.server} is not a server of ${orgId}`);
        if (server.zoneId !== v.zone) throw invalidRequest(`Seed file: volume ${v.name}: server ${v.server} is in zone ${server.zoneId}, not ${v.zone}`);
      }
      batch.push({
        id: v.id ?? newId('vol'),
        orgId,
        name: v.name,
        status: v.server ? 'attached' : 'available',
        type: v.type,
        regionId: v.region,
        zoneId: v.zone,
        sizeGb: v.size_gb,
        serverId: v.server ?? null,
        mountPath: v.server ? (v.mount_path ?? null) : null,
        mounted: Boolean(v.server),
        termMonths: v.term_months,
        billing: termPrice({ sizeGb: v.size_gb, price: offer.price }, v.currency, v.term_months),
        price: offer.price,
        expiresAt: v.expires_at ? new Date(v.expires_at) : addMonthsClamped(now, v.term_months),
        note: v.note ?? null,
        // seed-format.md has no labels or delete_protection: the defaults of lifecycle.md.
        labels: {},
        deleteProtection: false,
        ...(v.auto_renew === undefined ? {} : { autoRenew: this.autoRenewOf(v.auto_renew, `volume ${v.name}`) }),
      });
      out.volumes.push(batch[batch.length - 1].id);
      if (batch.length === VOLUMES_PER_STATEMENT) await this.createVolumes(batch.splice(0));
    }
    await this.createVolumes(batch);
    return out;
  }

  /**
   * The volumes in one statement (the region counters move once per statement, not once per
   * volume: a file with 100,000 volumes of a region loads in seconds). When the statement fails
   * on a constraint, it is undone (savepoint) and its volumes are created one by one, so the
   * error names the first volume that breaks it, as before.
   */
  private async createVolumes(volumes: NewVolume[]): Promise<void> {
    if (volumes.length === 0) return;
    try {
      await this.uow.savepoint(() => this.volumes.createMany(volumes));
      return;
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
    }
    for (const v of volumes) await this.createVolume(v);
  }

  /** A volume that does not fit the region's capacity (the used_gb counter) makes the file invalid. */
  private async createVolume(volume: NewVolume): Promise<Volume> {
    try {
      return await this.volumes.create(volume);
    } catch (err) {
      if (err instanceof DomainError && err.code === 'out_of_stock') {
        throw invalidRequest(`Seed file: volume ${volume.name}: region ${volume.regionId} has not enough capacity left for it (raise its capacity_gb)`);
      }
      throw err;
    }
  }
}

/** The catalog reads of one seed file, memoised (a file may hold 100,000 volumes of one region). */
class CatalogLookups {
  private readonly offers = new Map<string, Promise<VolumeOffer | undefined>>();
  private readonly zones = new Map<string, Promise<boolean>>();

  constructor(private readonly catalog: Catalog) {}

  offer(regionId: string, type: VolumeType): Promise<VolumeOffer | undefined> {
    const key = `${regionId}\u0000${type}`;
    if (!this.offers.has(key)) this.offers.set(key, this.catalog.offer(regionId, type));
    return this.offers.get(key)!;
  }

  zoneInRegion(regionId: string, zoneId: string): Promise<boolean> {
    const key = `${regionId}\u0000${zoneId}`;
    if (!this.zones.has(key)) this.zones.set(key, this.catalog.zoneInRegion(regionId, zoneId));
    return this.zones.get(key)!;
  }
}

/** A seed region's reserved IPv4 offer: its price and pool, both or neither (400 naming the one given alone, or a bad block). */
function reservedIpv4Offer(region: SeedFile['regions'][number]): { price: { USD: Money; IDR: Money }; addresses: string[] } | undefined {
  const price = region.reserved_ipv4_price_per_month;
  const pool = region.reserved_ipv4_pool;
  if (!price && !pool) return undefined;
  if (!price || !pool) {
    const missing = price ? 'reserved_ipv4_pool' : 'reserved_ipv4_price_per_month';
    throw invalidRequest(`regions.${region.id}.${missing} is required with the other reserved IPv4 member`, { field: `regions.${region.id}.${missing}` });
  }
  return {
    price: {
      USD: Money.parse(price.USD, 'USD', `regions.${region.id}.reserved_ipv4_price_per_month.USD`),
      IDR: Money.parse(price.IDR, 'IDR', `regions.${region.id}.reserved_ipv4_price_per_month.IDR`),
    },
    addresses: expandReservedIpv4Pool(pool, `regions.${region.id}.reserved_ipv4_pool`),
  };
}
