/**
 * A tiny browser stand-in for HTTP tests: a cookie jar per host, manual redirects, and form
 * POSTs that carry `Origin` and `Sec-Fetch-Site` like a browser would. Requests to the app's
 * public origin go in-process through `app.request`; any other origin (an identity provider)
 * over a real socket.
 */
type AppLike = { request: (input: string, init?: RequestInit) => Response | Promise<Response> };

export class FormAgent {
  private readonly jar = new Map<string, Map<string, string>>();
  readonly origin: string;

  constructor(
    private readonly app: AppLike,
    publicUrl: string,
  ) {
    this.origin = new URL(publicUrl).origin;
  }

  cookie(name: string, host = new URL(this.origin).host): string | undefined {
    return this.jar.get(host)?.get(name);
  }

  setCookie(name: string, value: string, host = new URL(this.origin).host): void {
    const jar = this.jar.get(host) ?? new Map<string, string>();
    this.jar.set(host, jar);
    jar.set(name, value);
  }

  clearCookies(): void {
    this.jar.clear();
  }

  async get(url: string, headers: Record<string, string> = {}): Promise<Response> {
    return this.send(url, { method: "GET", headers });
  }

  /** A form POST from the account page itself (same origin) unless `headers` says otherwise. */
  async post(url: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
    return this.send(url, {
      method: "POST",
      body: new URLSearchParams(form).toString(),
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        Origin: this.origin,
        "Sec-Fetch-Site": "same-origin",
        ...headers,
      },
    });
  }

  /** Follows 3xx answers with GETs (as a browser does after a form POST) until a final answer. */
  async follow(res: Response, from: string, max = 15): Promise<{ res: Response; url: string }> {
    let url = from;
    for (let i = 0; i < max && res.status >= 300 && res.status < 400; i++) {
      const location = res.headers.get("location");
      if (!location) break;
      url = new URL(location, new URL(url, this.origin)).toString();
      res = await this.get(url);
    }
    return { res, url };
  }

  async send(url: string, init: RequestInit & { headers: Record<string, string> }): Promise<Response> {
    const full = new URL(url, this.origin);
    const cookies = [...(this.jar.get(full.host) ?? new Map()).entries()].map(([k, v]) => `${k}=${v}`).join("; ");
    const headers = { ...init.headers, ...(cookies && { Cookie: cookies }) };
    // In-process requests keep the full URL and a Host header, as a browser's would arrive.
    const res =
      full.origin === this.origin
        ? await this.app.request(full.toString(), { ...init, headers: { Host: full.host, ...headers } })
        : await fetch(full, { ...init, headers, redirect: "manual" });
    this.store(full.host, res.headers.getSetCookie());
    return res;
  }

  private store(host: string, setCookies: string[]): void {
    const jar = this.jar.get(host) ?? new Map<string, string>();
    this.jar.set(host, jar);
    for (const line of setCookies) {
      const [pair = "", ...attrs] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === "";
      if (expired) jar.delete(name);
      else jar.set(name, value);
    }
  }
}
