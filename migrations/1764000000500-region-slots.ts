import { MigrationInterface, QueryRunner } from 'typeorm';

/** How many rows a region's counters are spread over. */
const SLOTS = 16;
/** The /64s of a region's /48 a slot hands out: slot k has k*4096+1 .. (k+1)*4096 (the last one stops at 65535). */
const IPV6_PER_SLOT = 4096;

/**
 * A region's counters spread over slot rows, so purchases in one region stop waiting for each
 * other (docs/reference/disk-options-and-regions.md, docs/explanation/consistency-and-storage.md).
 *
 * Before, every purchase moved one row per region (`regions.used_gb`, `vcpus_used`,
 * `ipv6_subnets_used`, under their CHECKs) and held it from the insert to the commit. Now:
 * - `region_slots`: 16 rows per region. Each holds a share of the region's capacity
 *   (`gb_share`, `vcpu_share`), what is used of it (`used_gb`, `vcpus_used`, under
 *   CHECK used <= share), and a range of the region's IPv6 /64s (`ipv6_first` ..
 *   `ipv6_last`, `ipv6_next` the next one to hand out). The shares of a region's slots sum to its
 *   capacity: a deferred constraint trigger checks it at commit of every change of a share.
 * - A disk or server inserted live takes its room from one slot (`region_slot_take`): the
 *   slot this transaction took before (so a transaction that buys many holds one row), else the
 *   first slot with room that no other transaction holds (`SKIP LOCKED`), else the first with
 *   room (waiting for it). When no slot has room by itself, the region is rebalanced: its row
 *   locked (one rebalance or capacity change at a time), every slot locked in order, the room
 *   left spread evenly again with what the purchase needs put in its slot, or refused with the
 *   constraint names the region's CHECKs had (`regions_used_within_capacity`,
 *   `regions_vcpus_within_capacity`, `regions_ipv6_subnets_used_check`), so the API's answers
 *   (409 out_of_stock) are unchanged.
 * - `volumes.region_slot`, `servers.region_slot`: the slot a live row's room is counted in; a
 *   resize adds to that slot (rebalancing into it when it is full), a deletion gives it back.
 * - Disks inserted together keep being counted per statement (a statement trigger sums them per
 *   slot): a seed of 100,000 disks moves each slot once.
 * - Changing a region's capacity spreads the room again (a trigger), and refuses a capacity below
 *   what its slots use with the same constraint names; `region_capacity_set` is the conditional
 *   form the catalog uses (never below what is used, nothing changed then).
 * - `region_usage`: the view of each region's capacity and what is used of it (the sums over its
 *   slots), for every reader.
 * The region's columns `used_gb`, `vcpus_used` and `ipv6_subnets_used` go; what they held moves to
 * slot 0 (the /64s handed out counted from the first slots' ranges).
 */
export class RegionSlots1764000000500 implements MigrationInterface {
  name = 'RegionSlots1764000000500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE region_slots (
        region_id   text NOT NULL REFERENCES regions (id) ON DELETE CASCADE,
        slot        smallint NOT NULL CHECK (slot >= 0 AND slot < ${SLOTS}),
        gb_share    bigint NOT NULL DEFAULT 0 CHECK (gb_share >= 0),
        used_gb     bigint NOT NULL DEFAULT 0 CHECK (used_gb >= 0),
        vcpu_share  bigint NOT NULL DEFAULT 0 CHECK (vcpu_share >= 0),
        vcpus_used  bigint NOT NULL DEFAULT 0 CHECK (vcpus_used >= 0),
        ipv6_first  integer NOT NULL,
        ipv6_next   integer NOT NULL,
        ipv6_last   integer NOT NULL,
        PRIMARY KEY (region_id, slot),
        CONSTRAINT region_slots_used_within_share CHECK (used_gb <= gb_share),
        CONSTRAINT region_slots_vcpus_within_share CHECK (vcpus_used <= vcpu_share),
        CONSTRAINT region_slots_ipv6_within_range CHECK (ipv6_first >= 1 AND ipv6_last <= 65535 AND ipv6_next BETWEEN ipv6_first AND ipv6_last + 1)
      );

      -- The room left of a region spread evenly over its slots again, what p_gb/p_vcpus ask for
      -- put into p_slot. The caller holds the region's row; every slot is locked here, in order.
      -- Refused (nothing changed) when the region's capacity does not hold what is used and asked.
      CREATE FUNCTION region_slots_spread(p_region text, p_slot smallint, p_gb bigint, p_vcpus bigint) RETURNS void LANGUAGE plpgsql AS $fn$
      DECLARE cap_gb bigint; cap_vcpus bigint; u_gb bigint; u_vcpus bigint; n integer; room_gb bigint; room_vcpus bigint;
      BEGIN
        SELECT capacity_gb, vcpu_capacity INTO cap_gb, cap_vcpus FROM regions WHERE id = p_region;
        PERFORM 1 FROM region_slots WHERE region_id = p_region ORDER BY slot FOR NO KEY UPDATE;
        SELECT count(*), coalesce(sum(used_gb), 0), coalesce(sum(vcpus_used), 0) INTO n, u_gb, u_vcpus FROM region_slots WHERE region_id = p_region;
        IF n = 0 THEN
          RETURN;
        END IF;
        room_gb := cap_gb - u_gb - p_gb;
        room_vcpus := cap_vcpus - u_vcpus - p_vcpus;
        IF room_gb < 0 THEN
          RAISE EXCEPTION 'new row for relation "regions" violates check constraint "regions_used_within_capacity"'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'regions_used_within_capacity', TABLE = 'regions';
        END IF;
        IF room_vcpus < 0 THEN
          RAISE EXCEPTION 'new row for relation "regions" violates check constraint "regions_vcpus_within_capacity"'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'regions_vcpus_within_capacity', TABLE = 'regions';
        END IF;
        UPDATE region_slots SET
          gb_share = used_gb + room_gb / n + (CASE WHEN slot < room_gb % n THEN 1 ELSE 0 END) + (CASE WHEN slot = p_slot THEN p_gb ELSE 0 END),
          vcpu_share = vcpus_used + room_vcpus / n + (CASE WHEN slot < room_vcpus % n THEN 1 ELSE 0 END) + (CASE WHEN slot = p_slot THEN p_vcpus ELSE 0 END)
         WHERE region_id = p_region;
      END
      $fn$;

      -- Rebalance for a purchase no slot holds by itself: the region's row locked first (one
      -- rebalance or capacity change at a time), then the spread. False when the region does not exist.
      CREATE FUNCTION region_slots_rebalance(p_region text, p_slot smallint, p_gb bigint, p_vcpus bigint) RETURNS boolean LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM 1 FROM regions WHERE id = p_region FOR NO KEY UPDATE;
        IF NOT FOUND THEN
          RETURN false;
        END IF;
        PERFORM region_slots_spread(p_region, p_slot, p_gb, p_vcpus);
        RETURN true;
      END
      $fn$;

      -- The slot a purchase takes its room from (see the migration's comment), locked; NULL when
      -- the region does not exist. p_slot: the slot it must be (a resize adds to its row's slot).
      CREATE FUNCTION region_slot_pick(p_region text, p_gb bigint, p_vcpus bigint, p_ipv6 boolean, p_slot smallint) RETURNS smallint LANGUAGE plpgsql AS $fn$
      DECLARE s smallint; home text;
      BEGIN
        IF p_slot IS NOT NULL THEN
          PERFORM 1 FROM region_slots WHERE region_id = p_region AND slot = p_slot
             AND gb_share - used_gb >= p_gb AND vcpu_share - vcpus_used >= p_vcpus AND (NOT p_ipv6 OR ipv6_next <= ipv6_last)
             FOR NO KEY UPDATE;
          IF FOUND THEN
            RETURN p_slot;
          END IF;
          IF region_slots_rebalance(p_region, p_slot, p_gb, p_vcpus) THEN
            RETURN p_slot;
          END IF;
          RETURN NULL;
        END IF;
        home := current_setting('cds.region_slot', true);
        IF left(home, length(p_region) + 1) = p_region || '#' THEN
          s := substr(home, length(p_region) + 2)::smallint;
          PERFORM 1 FROM region_slots WHERE region_id = p_region AND slot = s
             AND gb_share - used_gb >= p_gb AND vcpu_share - vcpus_used >= p_vcpus AND (NOT p_ipv6 OR ipv6_next <= ipv6_last)
             FOR NO KEY UPDATE;
          IF NOT FOUND THEN
            s := NULL;
          END IF;
        END IF;
        IF s IS NULL THEN
          SELECT slot INTO s FROM region_slots
           WHERE region_id = p_region AND gb_share - used_gb >= p_gb AND vcpu_share - vcpus_used >= p_vcpus AND (NOT p_ipv6 OR ipv6_next <= ipv6_last)
           ORDER BY slot LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED;
        END IF;
        IF s IS NULL THEN
          SELECT slot INTO s FROM region_slots
           WHERE region_id = p_region AND gb_share - used_gb >= p_gb AND vcpu_share - vcpus_used >= p_vcpus AND (NOT p_ipv6 OR ipv6_next <= ipv6_last)
           ORDER BY slot LIMIT 1 FOR NO KEY UPDATE;
        END IF;
        IF s IS NULL THEN
          IF p_ipv6 THEN
            SELECT slot INTO s FROM region_slots WHERE region_id = p_region AND ipv6_next <= ipv6_last ORDER BY slot LIMIT 1;
            IF s IS NULL AND EXISTS (SELECT 1 FROM region_slots WHERE region_id = p_region) THEN
              RAISE EXCEPTION 'new row for relation "regions" violates check constraint "regions_ipv6_subnets_used_check"'
                USING ERRCODE = 'check_violation', CONSTRAINT = 'regions_ipv6_subnets_used_check', TABLE = 'regions';
            END IF;
          ELSIF left(home, length(p_region) + 1) = p_region || '#' THEN
            s := substr(home, length(p_region) + 2)::smallint;
          ELSE
            s := 0;
          END IF;
          IF s IS NULL OR NOT region_slots_rebalance(p_region, s, p_gb, p_vcpus) THEN
            RETURN NULL;
          END IF;
        END IF;
        PERFORM set_config('cds.region_slot', p_region || '#' || s, true);
        RETURN s;
      END
      $fn$;

      -- The room taken in the slot picked: the slot's row after it (NULL when the region does not exist).
      CREATE FUNCTION region_slot_take(p_region text, p_gb bigint, p_vcpus bigint, p_ipv6 boolean, p_slot smallint) RETURNS region_slots LANGUAGE plpgsql AS $fn$
      DECLARE s smallint; r region_slots;
      BEGIN
        s := region_slot_pick(p_region, p_gb, p_vcpus, p_ipv6, p_slot);
        IF s IS NULL THEN
          RETURN NULL;
        END IF;
        UPDATE region_slots SET used_gb = used_gb + p_gb, vcpus_used = vcpus_used + p_vcpus,
               ipv6_next = ipv6_next + (CASE WHEN p_ipv6 THEN 1 ELSE 0 END)
         WHERE region_id = p_region AND slot = s RETURNING * INTO r;
        RETURN r;
      END
      $fn$;

      -- The first host address (::1) of the n-th /64 of the region's /48, compressed.
      CREATE OR REPLACE FUNCTION region_ipv6_host(p_region text, n integer) RETURNS text LANGUAGE plpgsql STABLE AS $fn$
      DECLARE prefix cidr; head text[];
      BEGIN
        SELECT ipv6_prefix INTO prefix FROM regions WHERE id = p_region;
        IF prefix IS NULL THEN
          RETURN NULL;
        END IF;
        -- A /48's network address prints as "a:b:c::" (its last 80 bits are zero): its first three groups.
        head := string_to_array(NULLIF(split_part(host(prefix), '::', 1), ''), ':');
        WHILE coalesce(array_length(head, 1), 0) < 3 LOOP
          head := head || '0'::text;
        END LOOP;
        RETURN host((head[1] || ':' || head[2] || ':' || head[3] || ':' || to_hex(n) || '::1')::inet);
      END
      $fn$;

      -- A region's slots, made with the region (shares spread over them, empty).
      CREATE FUNCTION regions_make_slots() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        INSERT INTO region_slots (region_id, slot, ipv6_first, ipv6_next, ipv6_last)
        SELECT NEW.id, k, k * ${IPV6_PER_SLOT} + 1, k * ${IPV6_PER_SLOT} + 1, least((k + 1) * ${IPV6_PER_SLOT}, 65535)
          FROM generate_series(0, ${SLOTS - 1}) k;
        PERFORM region_slots_spread(NEW.id, NULL, 0, 0);
        RETURN NULL;
      END
      $fn$;
      CREATE TRIGGER regions_make_slots AFTER INSERT ON regions FOR EACH ROW EXECUTE FUNCTION regions_make_slots();

      -- A region's capacity changed: the room spread again over its slots (refused below what is used).
      CREATE FUNCTION regions_spread_capacity() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM region_slots_spread(NEW.id, NULL, 0, 0);
        RETURN NULL;
      END
      $fn$;
      CREATE TRIGGER regions_spread_capacity AFTER UPDATE OF capacity_gb, vcpu_capacity ON regions
        FOR EACH ROW WHEN (OLD.capacity_gb IS DISTINCT FROM NEW.capacity_gb OR OLD.vcpu_capacity IS DISTINCT FROM NEW.vcpu_capacity)
        EXECUTE FUNCTION regions_spread_capacity();

      -- At commit: a region's slots share exactly its capacity.
      CREATE FUNCTION region_slots_shares_sum() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF EXISTS (SELECT 1 FROM regions r,
                          LATERAL (SELECT sum(gb_share)::bigint AS gb, sum(vcpu_share)::bigint AS vcpus FROM region_slots WHERE region_id = r.id) s
                    WHERE r.id = NEW.region_id AND (r.capacity_gb <> s.gb OR r.vcpu_capacity <> s.vcpus)) THEN
          RAISE EXCEPTION 'the shares of region %''s slots do not sum to its capacity', NEW.region_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'region_slots_shares_sum_capacity', TABLE = 'region_slots';
        END IF;
        RETURN NULL;
      END
      $fn$;
      CREATE CONSTRAINT TRIGGER region_slots_shares_sum AFTER INSERT OR UPDATE OF gb_share, vcpu_share ON region_slots
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION region_slots_shares_sum();

      -- The regions that exist: their slots, what they use in slot 0, the /64s handed out from the first ranges.
      INSERT INTO region_slots (region_id, slot, gb_share, used_gb, vcpu_share, vcpus_used, ipv6_first, ipv6_next, ipv6_last)
      SELECT r.id, k, CASE WHEN k = 0 THEN r.used_gb ELSE 0 END, CASE WHEN k = 0 THEN r.used_gb ELSE 0 END,
             CASE WHEN k = 0 THEN r.vcpus_used ELSE 0 END, CASE WHEN k = 0 THEN r.vcpus_used ELSE 0 END,
             k * ${IPV6_PER_SLOT} + 1,
             greatest(k * ${IPV6_PER_SLOT} + 1, least(least((k + 1) * ${IPV6_PER_SLOT}, 65535) + 1, r.ipv6_subnets_used + 1)),
             least((k + 1) * ${IPV6_PER_SLOT}, 65535)
        FROM regions r CROSS JOIN generate_series(0, ${SLOTS - 1}) k;
      SELECT region_slots_spread(id, NULL, 0, 0) FROM regions ORDER BY id;

      ALTER TABLE volumes ADD COLUMN region_slot smallint NOT NULL DEFAULT 0;
      ALTER TABLE servers ADD COLUMN region_slot smallint NOT NULL DEFAULT 0;

      -- Disks: the slot picked per row (locked), the room taken per statement and slot.
      DROP TRIGGER volumes_count_insert ON volumes;
      DROP FUNCTION regions_count_inserted_volumes();
      CREATE FUNCTION volumes_pick_region_slot() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        NEW.region_slot := coalesce(region_slot_pick(NEW.region_id, NEW.size_gb + NEW.resize_reserved_gb, 0, false, NULL), 0);
        RETURN NEW;
      END
      $fn$;
      CREATE TRIGGER volumes_pick_region_slot BEFORE INSERT ON volumes
        FOR EACH ROW WHEN (NEW.deleted_at IS NULL) EXECUTE FUNCTION volumes_pick_region_slot();
      CREATE FUNCTION volumes_take_inserted() RETURNS trigger LANGUAGE plpgsql AS $fn$
      DECLARE g record;
      BEGIN
        FOR g IN SELECT region_id, region_slot, sum(size_gb + resize_reserved_gb)::bigint AS gb FROM inserted_volumes
                  WHERE deleted_at IS NULL GROUP BY region_id, region_slot ORDER BY region_id, region_slot LOOP
          UPDATE region_slots SET used_gb = used_gb + g.gb WHERE region_id = g.region_id AND slot = g.region_slot AND gb_share - used_gb >= g.gb;
          IF NOT FOUND AND region_slots_rebalance(g.region_id, g.region_slot, g.gb, 0) THEN
            UPDATE region_slots SET used_gb = used_gb + g.gb WHERE region_id = g.region_id AND slot = g.region_slot;
          END IF;
        END LOOP;
        RETURN NULL;
      END
      $fn$;
      CREATE TRIGGER volumes_take_inserted AFTER INSERT ON volumes REFERENCING NEW TABLE AS inserted_volumes
        FOR EACH STATEMENT EXECUTE FUNCTION volumes_take_inserted();

      CREATE OR REPLACE FUNCTION regions_count_volume() RETURNS trigger LANGUAGE plpgsql AS $fn$
      DECLARE old_gb bigint := 0; new_gb bigint := 0; s smallint;
      BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.deleted_at IS NULL THEN
          old_gb := OLD.size_gb + OLD.resize_reserved_gb;
        END IF;
        IF TG_OP = 'UPDATE' AND NEW.deleted_at IS NULL THEN
          new_gb := NEW.size_gb + NEW.resize_reserved_gb;
        END IF;
        IF TG_OP = 'UPDATE' AND OLD.deleted_at IS NULL AND NEW.deleted_at IS NULL AND OLD.region_id = NEW.region_id THEN
          IF new_gb > old_gb THEN
            PERFORM region_slot_take(NEW.region_id, new_gb - old_gb, 0, false, OLD.region_slot);
          ELSIF new_gb < old_gb THEN
            UPDATE region_slots SET used_gb = used_gb - (old_gb - new_gb) WHERE region_id = OLD.region_id AND slot = OLD.region_slot;
          END IF;
          RETURN NULL;
        END IF;
        IF old_gb > 0 THEN
          UPDATE region_slots SET used_gb = used_gb - old_gb WHERE region_id = OLD.region_id AND slot = OLD.region_slot;
        END IF;
        IF TG_OP = 'UPDATE' AND NEW.deleted_at IS NULL THEN
          -- Live again, or moved to another region: counted in a slot of its own.
          s := (region_slot_take(NEW.region_id, new_gb, 0, false, NULL)).slot;
          IF s IS DISTINCT FROM NEW.region_slot THEN
            UPDATE volumes SET region_slot = coalesce(s, 0) WHERE id = NEW.id;
          END IF;
        END IF;
        RETURN NULL;
      END
      $fn$;

      -- Servers: the room (vCPUs) and the /64 taken per row, in one slot.
      DROP TRIGGER servers_assign_ipv6 ON servers;
      DROP FUNCTION servers_assign_ipv6();
      DROP FUNCTION next_server_ipv6(text);
      DROP TRIGGER servers_count_insert ON servers;
      CREATE FUNCTION servers_take_region_slot() RETURNS trigger LANGUAGE plpgsql AS $fn$
      DECLARE vcpus bigint := CASE WHEN NEW.vcpus IS NULL THEN 0 ELSE NEW.vcpus + NEW.resize_reserved_vcpus END;
              want_ipv6 boolean := NEW.ipv6 IS NULL; r region_slots;
      BEGIN
        IF vcpus = 0 AND NOT want_ipv6 THEN
          RETURN NEW;
        END IF;
        r := region_slot_take(NEW.region_id, 0, vcpus, want_ipv6, NULL);
        IF r.slot IS NOT NULL THEN
          NEW.region_slot := r.slot;
          IF want_ipv6 THEN
            NEW.ipv6 := region_ipv6_host(NEW.region_id, r.ipv6_next - 1);
          END IF;
        END IF;
        RETURN NEW;
      END
      $fn$;
      CREATE TRIGGER servers_take_region_slot BEFORE INSERT ON servers
        FOR EACH ROW WHEN (NEW.deleted_at IS NULL) EXECUTE FUNCTION servers_take_region_slot();

      CREATE OR REPLACE FUNCTION regions_count_server() RETURNS trigger LANGUAGE plpgsql AS $fn$
      DECLARE old_v bigint := 0; new_v bigint := 0; s smallint;
      BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.deleted_at IS NULL AND OLD.vcpus IS NOT NULL THEN
          old_v := OLD.vcpus + OLD.resize_reserved_vcpus;
        END IF;
        IF TG_OP = 'UPDATE' AND NEW.deleted_at IS NULL AND NEW.vcpus IS NOT NULL THEN
          new_v := NEW.vcpus + NEW.resize_reserved_vcpus;
        END IF;
        IF TG_OP = 'UPDATE' AND OLD.deleted_at IS NULL AND NEW.deleted_at IS NULL AND OLD.region_id = NEW.region_id THEN
          IF new_v > old_v THEN
            PERFORM region_slot_take(NEW.region_id, 0, new_v - old_v, false, OLD.region_slot);
          ELSIF new_v < old_v THEN
            UPDATE region_slots SET vcpus_used = vcpus_used - (old_v - new_v) WHERE region_id = OLD.region_id AND slot = OLD.region_slot;
          END IF;
          RETURN NULL;
        END IF;
        IF old_v > 0 THEN
          UPDATE region_slots SET vcpus_used = vcpus_used - old_v WHERE region_id = OLD.region_id AND slot = OLD.region_slot;
        END IF;
        IF TG_OP = 'UPDATE' AND new_v > 0 THEN
          s := (region_slot_take(NEW.region_id, 0, new_v, false, NULL)).slot;
          IF s IS DISTINCT FROM NEW.region_slot THEN
            UPDATE servers SET region_slot = coalesce(s, 0) WHERE id = NEW.id;
          END IF;
        END IF;
        RETURN NULL;
      END
      $fn$;

      -- The conditional capacity change of the catalog: never below what is used (nothing changed
      -- then). The region's row, then its slots, locked as a rebalance locks them.
      CREATE FUNCTION region_capacity_set(p_region text, p_gb bigint, p_vcpus bigint)
        RETURNS TABLE (done boolean, used_gb bigint, vcpus_used bigint, name text, capacity_gb bigint, vcpu_capacity bigint) LANGUAGE plpgsql AS $fn$
      DECLARE u_gb bigint; u_vcpus bigint;
      BEGIN
        PERFORM 1 FROM regions WHERE id = p_region FOR NO KEY UPDATE;
        IF NOT FOUND THEN
          RETURN;
        END IF;
        PERFORM 1 FROM region_slots WHERE region_id = p_region ORDER BY slot FOR NO KEY UPDATE;
        SELECT coalesce(sum(s.used_gb), 0), coalesce(sum(s.vcpus_used), 0) INTO u_gb, u_vcpus FROM region_slots s WHERE s.region_id = p_region;
        IF (p_gb IS NOT NULL AND p_gb < u_gb) OR (p_vcpus IS NOT NULL AND p_vcpus < u_vcpus) THEN
          RETURN QUERY SELECT false, u_gb, u_vcpus, r.name, r.capacity_gb, r.vcpu_capacity FROM regions r WHERE r.id = p_region;
          RETURN;
        END IF;
        RETURN QUERY UPDATE regions r SET capacity_gb = coalesce(p_gb, r.capacity_gb), vcpu_capacity = coalesce(p_vcpus, r.vcpu_capacity) WHERE r.id = p_region
          RETURNING true, u_gb, u_vcpus, r.name, r.capacity_gb, r.vcpu_capacity;
      END
      $fn$;

      ALTER TABLE regions DROP COLUMN used_gb, DROP COLUMN vcpus_used, DROP COLUMN ipv6_subnets_used;

      CREATE VIEW region_usage AS
      SELECT r.id, r.capacity_gb, coalesce(s.used_gb, 0)::bigint AS used_gb, r.vcpu_capacity, coalesce(s.vcpus_used, 0)::bigint AS vcpus_used,
             coalesce(s.ipv6_subnets_used, 0)::integer AS ipv6_subnets_used
        FROM regions r
        LEFT JOIN LATERAL (SELECT sum(used_gb) AS used_gb, sum(vcpus_used) AS vcpus_used, sum(ipv6_next - ipv6_first) AS ipv6_subnets_used
                             FROM region_slots WHERE region_id = r.id) s ON true;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP VIEW region_usage;
      ALTER TABLE regions ADD COLUMN used_gb bigint NOT NULL DEFAULT 0 CHECK (used_gb >= 0),
        ADD COLUMN vcpus_used bigint NOT NULL DEFAULT 0 CHECK (vcpus_used >= 0),
        ADD COLUMN ipv6_subnets_used integer NOT NULL DEFAULT 0 CHECK (ipv6_subnets_used BETWEEN 0 AND 65535);
      UPDATE regions r SET used_gb = s.gb, vcpus_used = s.v, ipv6_subnets_used = s.n
        FROM (SELECT region_id, sum(used_gb) AS gb, sum(vcpus_used) AS v, max(ipv6_next) - 1 AS n FROM region_slots GROUP BY region_id) s
       WHERE s.region_id = r.id;
      ALTER TABLE regions ADD CONSTRAINT regions_used_within_capacity CHECK (used_gb <= capacity_gb),
        ADD CONSTRAINT regions_vcpus_within_capacity CHECK (vcpus_used <= vcpu_capacity);
      DROP FUNCTION region_capacity_set(text, bigint, bigint);

      DROP TRIGGER servers_take_region_slot ON servers;
      DROP FUNCTION servers_take_region_slot();
      CREATE OR REPLACE FUNCTION regions_count_server() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.deleted_at IS NULL AND OLD.vcpus IS NOT NULL THEN
          UPDATE regions SET vcpus_used = vcpus_used - OLD.vcpus - OLD.resize_reserved_vcpus WHERE id = OLD.region_id;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.deleted_at IS NULL AND NEW.vcpus IS NOT NULL THEN
          UPDATE regions SET vcpus_used = vcpus_used + NEW.vcpus + NEW.resize_reserved_vcpus WHERE id = NEW.region_id;
        END IF;
        RETURN NULL;
      END
      $fn$;
      CREATE TRIGGER servers_count_insert AFTER INSERT ON servers
        FOR EACH ROW WHEN (NEW.vcpus IS NOT NULL AND NEW.deleted_at IS NULL) EXECUTE FUNCTION regions_count_server();
      CREATE FUNCTION next_server_ipv6(region text) RETURNS text LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE n integer;
      BEGIN
        UPDATE regions SET ipv6_subnets_used = ipv6_subnets_used + 1 WHERE id = region RETURNING ipv6_subnets_used INTO n;
        IF n IS NULL THEN
          RETURN NULL;
        END IF;
        RETURN region_ipv6_host(region, n);
      END
      $fn$;
      CREATE FUNCTION servers_assign_ipv6() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        NEW.ipv6 := next_server_ipv6(NEW.region_id);
        RETURN NEW;
      END
      $fn$;
      CREATE TRIGGER servers_assign_ipv6 BEFORE INSERT ON servers
        FOR EACH ROW WHEN (NEW.ipv6 IS NULL AND NEW.deleted_at IS NULL) EXECUTE FUNCTION servers_assign_ipv6();

      CREATE OR REPLACE FUNCTION regions_count_volume() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.deleted_at IS NULL THEN
          UPDATE regions SET used_gb = used_gb - OLD.size_gb - OLD.resize_reserved_gb WHERE id = OLD.region_id;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.deleted_at IS NULL THEN
          UPDATE regions SET used_gb = used_gb + NEW.size_gb + NEW.resize_reserved_gb WHERE id = NEW.region_id;
        END IF;
        RETURN NULL;
      END
      $fn$;
      DROP TRIGGER volumes_take_inserted ON volumes;
      DROP FUNCTION volumes_take_inserted();
      DROP TRIGGER volumes_pick_region_slot ON volumes;
      DROP FUNCTION volumes_pick_region_slot();
      CREATE FUNCTION regions_count_inserted_volumes() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM 1 FROM regions
          WHERE id IN (SELECT region_id FROM inserted_volumes WHERE deleted_at IS NULL)
          ORDER BY id FOR NO KEY UPDATE;
        UPDATE regions r SET used_gb = r.used_gb + n.gb
          FROM (SELECT region_id, sum(size_gb + resize_reserved_gb) AS gb FROM inserted_volumes WHERE deleted_at IS NULL GROUP BY region_id) n
         WHERE r.id = n.region_id;
        RETURN NULL;
      END
      $fn$;
      CREATE TRIGGER volumes_count_insert AFTER INSERT ON volumes REFERENCING NEW TABLE AS inserted_volumes
        FOR EACH STATEMENT EXECUTE FUNCTION regions_count_inserted_volumes();

      ALTER TABLE servers DROP COLUMN region_slot;
      ALTER TABLE volumes DROP COLUMN region_slot;
      DROP TRIGGER regions_spread_capacity ON regions;
      DROP FUNCTION regions_spread_capacity();
      DROP TRIGGER regions_make_slots ON regions;
      DROP FUNCTION regions_make_slots();
      DROP FUNCTION region_slot_take(text, bigint, bigint, boolean, smallint);
      DROP TABLE region_slots;
      DROP FUNCTION region_slots_shares_sum();
      DROP FUNCTION region_slot_pick(text, bigint, bigint, boolean, smallint);
      DROP FUNCTION region_slots_rebalance(text, smallint, bigint, bigint);
      DROP FUNCTION region_slots_spread(text, smallint, bigint, bigint);
    `);
  }
}
