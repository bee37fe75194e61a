import { JetStreamApiError } from "@nats-io/jetstream";

/** Whether `error` is the JetStream API's answer with the error code `code`. */
export function isApiError(error: unknown, code: number): boolean {
  return error instanceof JetStreamApiError && error.apiError().err_code === code;
}

/** The API's "consumer not found". */
export const CONSUMER_NOT_FOUND = 10014;
