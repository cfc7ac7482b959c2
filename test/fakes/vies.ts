import type { IncomingMessage, ServerResponse } from "node:http";
import { answerFault, FaultServer, type NetFault, readJson } from "./fault-server.js";

export type ViesFault = NetFault | "ms_unavailable" | null;

export interface ViesTrader {
  name: string;
  address: string;
}

/**
 * A fake of the VIES REST API (`POST /check-vat-number`) on 127.0.0.1, answering in the
 * published JSON: `{countryCode, vatNumber, requestDate, valid, requestIdentifier, name, address}`
 * ("---" for withheld fields), and `{"actionSucceed":false,"errorWrappers":[{"error","message"}]}`
 * (HTTP 200) when a member state is unavailable. Records every request.
 */
export class ViesFake extends FaultServer {
  readonly requests: { method: string; path: string; body: unknown }[] = [];
  fault: ViesFault = null;
  protected override readonly basePath = "/taxation_customs/vies/rest-api";

  /** `registered` maps "DE136695976" (member-state code + number) to the trader, or null if withheld. */
  constructor(private readonly registered: Record<string, ViesTrader | null>) {
    super();
  }

  protected async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = (await readJson(req)) ?? null;
    this.requests.push({ method: req.method ?? "", path: req.url ?? "", body });
    await this.released();
    const send = (status: number, json: unknown) =>
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(json));
    if (answerFault(this.fault, req, res, '{"countryCode":"DE","val')) return;
    if (this.fault === "ms_unavailable") {
      send(200, {
        actionSucceed: false,
        errorWrappers: [{ error: "MS_UNAVAILABLE", message: "The Member State service is unavailable." }],
      });
      return;
    }
    const { countryCode, vatNumber } = (body ?? {}) as { countryCode?: unknown; vatNumber?: unknown };
    if (req.method !== "POST" || req.url?.split("?")[0] !== `${this.basePath}/check-vat-number`) {
      send(404, { actionSucceed: false, errorWrappers: [{ error: "NOT_FOUND" }] });
      return;
    }
    if (typeof countryCode !== "string" || typeof vatNumber !== "string") {
      send(400, { actionSucceed: false, errorWrappers: [{ error: "INVALID_INPUT" }] });
      return;
    }
    const key = `${countryCode}${vatNumber}`;
    const known = key in this.registered;
    const trader = this.registered[key] ?? null;
    send(200, {
      countryCode,
      vatNumber,
      requestDate: "2026-11-21T10:15:00.000Z",
      valid: known,
      requestIdentifier: known ? "WAPIAAAAZ0001" : "",
      name: trader?.name ?? "---",
      address: trader?.address ?? "---",
      traderName: "---",
      traderStreet: "---",
      traderPostalCode: "---",
      traderCity: "---",
      traderCompanyType: "---",
      traderNameMatch: "NOT_PROCESSED",
      traderStreetMatch: "NOT_PROCESSED",
      traderPostalCodeMatch: "NOT_PROCESSED",
      traderCityMatch: "NOT_PROCESSED",
      traderCompanyTypeMatch: "NOT_PROCESSED",
    });
  }
}
