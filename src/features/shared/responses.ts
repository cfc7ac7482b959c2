import { z } from "@hono/zod-openapi";
import { type ErrorExample, errorAnswer } from "../../http/contract.js";
import { ERROR_CODES } from "../../http/errors.js";

/** OpenAPI pieces every route shares: the one error shape and its examples. */

export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.enum(ERROR_CODES as [string, ...string[]]),
      message: z.string(),
      reason: z.string().optional(),
      details: z.record(z.string(), z.unknown()).optional(),
      request_id: z.string(),
    }),
  })
  .openapi("ErrorResponse");

export type HeaderDocs = Record<
  string,
  {
    description: string;
    schema: {
      type: "string" | "integer";
      maxLength?: number;
      minimum?: number;
      maximum?: number;
      example?: unknown;
    };
  }
>;

export { HEADERS_MAX } from "../../http/contract.js";

/** An error response with one named example per case (http/contract.ts's, with the Zod schema that names the shape). */
export function errorResponse(description: string, examples: Record<string, ErrorExample>, headers?: HeaderDocs) {
  const { examples: named } = errorAnswer(description, examples).content?.["application/json"] ?? {};
  return {
    description,
    ...(headers && { headers }),
    content: { "application/json": { schema: ErrorSchema, examples: named as Record<string, { value: unknown }> } },
  };
}
