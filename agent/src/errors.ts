/** A refusal the agent answers with `{error: {code, message}}` (final for the service's operation), or 503 when it may pass. */
export class AgentError extends Error {
  constructor(
    readonly status: 400 | 404 | 409 | 503,
    readonly code: 'invalid_request' | 'not_found' | 'invalid_state' | 'out_of_stock' | 'unavailable',
    message: string,
  ) {
    super(message);
    this.name = 'AgentError';
  }
}

export const invalidRequest = (message: string) => new AgentError(400, 'invalid_request', message);
export const notFound = (message: string) => new AgentError(404, 'not_found', message);
export const invalidState = (message: string) => new AgentError(409, 'invalid_state', message);
export const outOfStock = (message: string) => new AgentError(409, 'out_of_stock', message);
export const unavailable = (message: string) => new AgentError(503, 'unavailable', message);
