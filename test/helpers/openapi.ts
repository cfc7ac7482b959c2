import type { App } from "../../src/app.js";

export interface DocumentedOperation {
  /** The query parameters (header parameters such as Authorization are left out). */
  parameters: { name: string; required: boolean; in?: string }[];
  responses: Record<
    string,
    { content: { "application/json": { example?: unknown; examples?: Record<string, { value: unknown }> } } }
  >;
}

/** The GET operation of `path` in the app's /v1/openapi.json. */
export async function documentedGet(app: App, path: string): Promise<DocumentedOperation> {
  const doc = (await (await app.request("/v1/openapi.json")).json()) as {
    paths: Record<string, { get: DocumentedOperation }>;
  };
  const op = doc.paths[path]?.get;
  if (!op) throw new Error(`${path} is not documented`);
  return { ...op, parameters: op.parameters.filter((p) => p.in === "query") };
}

/** The single `example` of a documented response (throws when there is none). */
export function exampleOf<T>(op: DocumentedOperation, status: number): T {
  const example = op.responses[String(status)]?.content["application/json"].example;
  if (example === undefined) throw new Error(`no example for ${status}`);
  return example as T;
}

/** The named `examples` of a documented response (values unwrapped). */
export function examplesOf(op: DocumentedOperation, status: number): Record<string, unknown> {
  const examples = op.responses[String(status)]?.content["application/json"].examples ?? {};
  return Object.fromEntries(Object.entries(examples).map(([name, e]) => [name, e.value]));
}
