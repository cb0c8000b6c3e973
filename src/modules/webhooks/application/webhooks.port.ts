import { Page, PageCursor } from '../../../shared/kernel/pagination/cursor';
import { DeliveryError, DeliveryStatus, WebhookDelivery, WebhookEndpoint } from '../domain/webhook';

export interface DeliveryListQuery {
  status?: DeliveryStatus;
  eventType?: string;
  limit: number;
  after?: PageCursor;
}

/** A delivery claimed for an attempt, with what the attempt needs. */
export interface ClaimedDelivery {
  id: string;
  endpointId: string;
  eventId: string;
  attempts: number;
  url: string;
  secretSealed: string;
  previousSecretSealed: string | null;
  secretRotationEndsAt: Date | null;
  body: string;
}

export interface AttemptOutcome {
  at: Date;
  responseStatus: number | null;
  /** null: a 2xx. */
  error: DeliveryError | null;
  retryAfterS: number | null;
}

/** Endpoints, events and deliveries of event webhooks. Every method runs in the active transaction (if any). */
export abstract class WebhookStore {
  /** Locks the organization's row: the endpoint count is taken under it. */
  abstract lockOrganization(orgId: string): Promise<void>;
  abstract countEndpoints(orgId: string): Promise<number>;
  abstract insertEndpoint(endpoint: WebhookEndpoint): Promise<void>;
  abstract findEndpoint(orgId: string, id: string): Promise<WebhookEndpoint | undefined>;
  abstract lockEndpoint(orgId: string, id: string): Promise<WebhookEndpoint | undefined>;
  /** Newest first. */
  abstract listEndpoints(orgId: string, limit: number, after: PageCursor | undefined): Promise<Page<WebhookEndpoint>>;
  abstract saveEndpoint(endpoint: WebhookEndpoint): Promise<void>;
  /** The endpoint, its deliveries, and the events no other endpoint's delivery refers to. */
  abstract deleteEndpoint(id: string): Promise<void>;
  /** The endpoint's pending deliveries end `failed` (endpoint_disabled). */
  abstract failPending(endpointId: string, at: Date): Promise<number>;
  /** A new event (ping) for this endpoint only. */
  abstract insertEvent(event: { id: string; orgId: string; type: string; createdAt: Date; body: string }): Promise<void>;
  abstract insertDelivery(delivery: WebhookDelivery): Promise<void>;
  abstract findDelivery(endpointId: string, id: string): Promise<WebhookDelivery | undefined>;
  abstract listDeliveries(endpointId: string, query: DeliveryListQuery): Promise<Page<WebhookDelivery>>;
  /**
   * Claims (FOR UPDATE SKIP LOCKED) up to `limit` due deliveries under a lease until
   * `leaseUntil`, shared between organizations: round-robin, the organization with the fewest
   * in flight first, each organization's oldest due first; at most `perEndpoint` in flight per
   * endpoint and `perOrganization` per organization, counting those other processes hold.
   */
  abstract claim(workerId: string, now: Date, leaseUntil: Date, limit: number, perEndpoint: number, perOrganization: number): Promise<ClaimedDelivery[]>;
  /** Locks an endpoint by id alone (the delivery worker, before the delivery's row: the order every writer follows). */
  abstract lockEndpointById(id: string): Promise<WebhookEndpoint | undefined>;
  /** Locks a delivery this worker still holds (pending, claimed by it): its endpoint and its attempts, or undefined. */
  abstract lockHeld(id: string, workerId: string): Promise<{ endpointId: string; orgId: string; attempts: number } | undefined>;
  /** A held delivery (pending, claimed by `workerId`) ends `succeeded`, in one statement; whether it was still held. */
  abstract saveHeldSuccess(id: string, workerId: string, outcome: AttemptOutcome): Promise<boolean>;
  /** Ends or reschedules a held delivery after an attempt. */
  abstract saveAttempt(id: string, outcome: AttemptOutcome, status: DeliveryStatus, nextAttemptAt: Date | null): Promise<void>;
  /** Success clears the endpoint's failing_since; a failure sets it when null and returns the endpoint after the change. */
  abstract markEndpointHealth(endpointId: string, healthy: boolean, at: Date): Promise<WebhookEndpoint | undefined>;
  /** Deletes up to `limit` ended deliveries created before `cutoff`, and the events before it no delivery refers to; how many rows. */
  abstract purgeBefore(cutoff: Date, limit: number): Promise<number>;
}
