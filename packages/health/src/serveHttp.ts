import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { HttpRouteResponse, HttpRoutes } from "@ruststream/core";
import { RustStreamError } from "@ruststream/core";

export interface ServeHttpOptions {
  /** The port; 0 picks a free one (read it back from `url`). */
  readonly port: number;
  /** Default 127.0.0.1: only this machine. Give "0.0.0.0" (or "::") for an orchestrator's probes. */
  readonly host?: string;
  /** The endpoints by path: `health(app).routes`, `prometheusMetrics(app).routes`, or both spread. */
  readonly routes: HttpRoutes;
}

/** A running operations server. */
export interface HttpServer {
  /** `http://host:port`, with the port it really listens on. */
  readonly url: string;
  /** Stops listening and closes every open connection (a scraper's keep-alive too). */
  close(): Promise<void>;
}

const text = "text/plain; charset=utf-8";

/**
 * Serves `routes` over HTTP: GET or HEAD of a path answers with its route's response (the query is
 * ignored), any other path 404, any other method 405, a route that throws 500.
 */
export async function serveHttp(options: ServeHttpOptions): Promise<HttpServer> {
  const { port, routes } = options;
  const host = options.host ?? "127.0.0.1";
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new RustStreamError(
      "invalid-argument",
      `serveHttp({ port: ${port} }): give a whole number from 0 to 65535 (0 picks a free port)`,
    );
  }
  const server = createServer((request, response) => {
    void respond(routes, request, response);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      reject(
        new RustStreamError(
          "invalid-argument",
          `serveHttp could not listen on ${host}:${port} (${error.code ?? error.message}): pick another port, or 0 for a free one`,
          { cause: error },
        ),
      );
    });
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shown}:${address.port}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

async function respond(
  routes: HttpRoutes,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const path = new URL(request.url ?? "/", "http://localhost").pathname;
  let answer: HttpRouteResponse;
  const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
  if (route === undefined) {
    answer = {
      status: 404,
      contentType: text,
      body: `no endpoint at ${path}; this server has ${Object.keys(routes).join(", ") || "none"}\n`,
    };
  } else if (request.method !== "GET" && request.method !== "HEAD") {
    answer = { status: 405, contentType: text, body: `${path} answers GET and HEAD only\n` };
  } else {
    try {
      answer = await route();
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      answer = { status: 500, contentType: text, body: `${path} failed: ${detail}\n` };
    }
  }
  const body = Buffer.from(answer.body, "utf8");
  response.writeHead(answer.status, {
    "content-type": answer.contentType,
    "content-length": body.length,
    ...(answer.status === 405 ? { allow: "GET, HEAD" } : {}),
  });
  response.end(request.method === "HEAD" ? undefined : body);
}
