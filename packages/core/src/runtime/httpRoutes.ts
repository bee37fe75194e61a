/** What an operations endpoint (a health probe, a metrics scrape) answers over HTTP. */
export interface HttpRouteResponse {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

/**
 * Operations endpoints by path (`"/metrics"`, `"/health/ready"`): the packages that provide them
 * (health, metrics) hand these out, and one HTTP server serves whichever a service turns on. A
 * type only, so core stays free of any server.
 */
export type HttpRoutes = Readonly<
  Record<string, () => HttpRouteResponse | Promise<HttpRouteResponse>>
>;
