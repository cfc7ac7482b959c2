import type { Config } from "../../config.js";

export interface LinkProvider {
  /** better-auth provider id (also the `providerId` of a linked account). */
  id: "github" | "google" | "oidc";
  name: string;
}

/** The identity providers a signed-in user may link: only those whose credentials are configured. */
export function configuredProviders(config: Config): LinkProvider[] {
  const out: LinkProvider[] = [];
  if (config.GITHUB_CLIENT_ID && config.GITHUB_CLIENT_SECRET) out.push({ id: "github", name: "GitHub" });
  if (config.GOOGLE_CLIENT_ID && config.GOOGLE_CLIENT_SECRET) out.push({ id: "google", name: "Google" });
  if (config.OIDC_ISSUER && config.OIDC_CLIENT_ID) out.push({ id: "oidc", name: config.OIDC_NAME });
  return out;
}
