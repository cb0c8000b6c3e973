import { AutoRenewSetting } from '../../prepaid/domain/auto-renew';
import { Money, PricePair } from '../../../shared/kernel/money/money';
import { Operation } from '../../operations/domain/operation';
import { Labels } from '../../prepaid/domain/labels';
import { TermMonths } from '../../prepaid/domain/term';
import { Server, ServerStatus } from '../domain/server';

/** A bought server as its purchase writes it (status creating, no ipv4 yet). */
export interface NewServer {
  id: string;
  orgId: string;
  name: string;
  regionId: string;
  zoneId: string;
  planId: string;
  vcpus: number;
  memoryGb: number;
  diskGb: number;
  image: string;
  termMonths: TermMonths;
  billing: Money;
  price: PricePair;
  expiresAt: Date;
  labels: Labels;
  deleteProtection: boolean;
  /** The SSH keys given, by id, in the order given. */
  sshKeyIds: string[];
  createdAt: Date;
  /** Automatic renewal (terms.md); absent: off. */
  autoRenew?: AutoRenewSetting;
}

/** The server writes of purchases, power actions, renewals and their executors, in the caller's transaction. */
export abstract class ServerLifecycle {
  /**
   * Inserts the server (its vCPUs reserved by the region counter's trigger). 409 conflict when
   * the name is taken among the organization's live servers (details.existing_id), 409
   * out_of_stock when the region's free vCPUs are below the plan's (the CHECK decides). Answers
   * the server as inserted (as ServerReads.findInOrg would read it in this transaction).
   */
  abstract insert(server: NewServer): Promise<Server>;
  /**
   * Locks the organization's row (its server limit read from the locked, latest version: null
   * when the organization has none of its own), then, in one read after the lock, counts its live
   * servers (the quota, counted under that lock) and finds the live server holding `name`.
   */
  abstract lockOrgForPurchase(orgId: string, name: string): Promise<{ serverLimit: number | null; live: number; holder: string | undefined }>;
  /** The server, locked until the transaction ends (any organization: the worker's executors); undefined when absent. */
  abstract lock(id: string): Promise<Server | undefined>;
  /**
   * Stores a vm.* or template.* operation of the server (the workers are told once the
   * transaction commits) unless the server has an unfinished one: the unique partial index
   * operations_one_unfinished_server_op decides, across processes; then nothing is written and
   * the unfinished operation's id is answered.
   */
  abstract acceptOperation(operation: Operation): Promise<{ accepted: true } | { accepted: false; busyWith: string | undefined }>;
  /** The unfinished vm.* or template.* operation of the server, if any. */
  abstract unfinishedOperation(serverId: string): Promise<string | undefined>;
  abstract setStatus(id: string, status: ServerStatus): Promise<void>;
  /** vm.create's success: running, its ipv4, expires_at from now. */
  abstract markReady(id: string, ipv4: string, expiresAt: Date): Promise<void>;
  /** A renewal's success: term, billing, expiry. */
  abstract renew(id: string, termMonths: TermMonths, billing: Money, expiresAt: Date): Promise<void>;
  /** A failed purchase: deleted (its vCPUs given back by the counter's trigger, ipv4 cleared). */
  abstract markDeleted(id: string, at: Date): Promise<void>;
  /** Reserves `vcpus` more in the region for the server's plan change (resize_reserved_vcpus); 409 out_of_stock when they do not fit (the CHECK decides). */
  abstract reserveVcpus(id: string, regionId: string, vcpus: number): Promise<void>;
  /** A plan change took effect: the plan, its specs and its price frozen; the reservation ended (vCPUs a smaller plan frees go back). */
  abstract changePlan(id: string, plan: { planId: string; vcpus: number; memoryGb: number; diskGb: number; price: PricePair }): Promise<void>;
  /** A plan change did not happen: its reserved vCPUs given back. */
  abstract releaseVcpus(id: string): Promise<void>;
  /** A rebuild reinstalled the boot disk: the image and the SSH keys given to it. */
  abstract rebuilt(id: string, image: string, sshKeyIds: string[]): Promise<void>;
  /** Removes `user_data` from the operation's stored params (after creating_instance, or when it ends). */
  abstract forgetUserData(operationId: string): Promise<void>;
}
