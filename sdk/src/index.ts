/**
 * @cloud-disk/sdk: the Cloud Disk Service API for TypeScript and JavaScript. Waits for operations
 * with long-polls, retries what may be retried (with the same Idempotency-Key), pages lists by
 * itself, verifies webhooks. Node.js 22 or later; no dependency.
 */
export { CloudDisk, OperationsClient } from './client.js';
export type { ClientOptions, FetchLike, RetryInfo } from './transport.js';
export { userAgent } from './transport.js';
export type { ActionOptions, RequestOptions, WaitOptions } from './area.js';
export { Paginator } from './pagination.js';
export * from './errors.js';
export { verify as verifyWebhook, webhooks } from './webhooks.js';
export type { VerifyOptions, WebhookEvent, WebhookEventData } from './webhooks.js';
export * from './generated/api.js';
export type * from './generated/schema.js';
export { API_VERSION, SDK_VERSION } from './generated/version.js';
