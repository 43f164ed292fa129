import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, apiOk, getWorkflow, register } from "./helpers";

const wait = [{ name: "hold", taskReferenceName: "hold", type: "WAIT" }];

/** POSTs `body` (bytes as they are, or text) to `path` as JSON, as the admin. */
function postRaw(path: string, body: Uint8Array | string): Promise<Response> {
  return SELF.fetch(`https://conductor.test${path}`, { method: "POST", headers: { "x-api-key": ADMIN_KEY, "content-type": "application/json" }, body });
}

/** The error answer of a refused request, after checking its status and kind. */
async function refusal(response: Response, status: number, error: string): Promise<{ message: string; validationErrors?: Array<{ path: string; message: string }> }> {
  const body = (await response.json()) as { status: number; error: string; message: string; validationErrors?: Array<{ path: string; message: string }> };
  expect({ status: response.status, bodyStatus: body.status, error: body.error }).toEqual({ status, bodyStatus: status, error });
  return body;
}

describe("JSON request bodies as bytes", () => {
  it("a body that is not UTF-8 (Latin-1 'café') is a 400 that changes nothing, where it was stored with U+FFFD in place of the é; a byte order mark before the JSON is read past", async () => {
    await register({ name: "uni_bytes", tasks: wait });
    // {"name":"uni_bytes","idempotencyKey":"uni-bytes-1","idempotencyStrategy":"FAIL","input":{"city":"caf\xe9"}} in Latin-1.
    const latin1 = Uint8Array.from('{"name":"uni_bytes","idempotencyKey":"uni-bytes-1","idempotencyStrategy":"FAIL","input":{"city":"café"}}', (c) => c.charCodeAt(0));
    const refused = await refusal(await postRaw("/api/workflow", latin1), 400, "VALIDATION_ERROR");
    expect(refused.validationErrors).toEqual([{ path: "(body)", message: "Request body is not valid UTF-8: JSON must be sent as UTF-8" }]);

    // Nothing claimed the key: a FAIL start with it now starts (a claim would have made it a 409).
    const text = '{"name":"uni_bytes","idempotencyKey":"uni-bytes-1","idempotencyStrategy":"FAIL","input":{"city":"café"}}';
    const started = await postRaw("/api/workflow", new TextEncoder().encode(`\ufeff${text}`));
    expect(started.status).toBe(200);
    expect((await getWorkflow(await started.text())).input).toEqual({ city: "café" });
  });
});
