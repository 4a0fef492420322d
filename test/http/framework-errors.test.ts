import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:net";
import { makeTestApp, type TestContext } from "../helpers/app.js";

/** Sends raw bytes and collects everything until the server closes the socket. */
function rawExchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(request));
    let received = "";
    socket.on("data", (d) => (received += d));
    socket.on("close", () => resolve(received));
    socket.on("error", reject);
  });
}

describe("errors Fastify raises itself use the documented error body", () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await makeTestApp();
  });
  after(() => ctx.app.close());

  const key = () => ctx.orgA.key;

  it("answers 400 invalid_url for a bad percent-encoding in the path", async () => {
    const res = await ctx.app.inject({ method: "GET", url: `/api/v2/zone_sets/%zz?key=${key()}` });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().status, "error");
    assert.equal(res.json().error.code, "invalid_url");
  });

  it("answers 414 path_parameter_too_long for a path parameter over 100 characters", async () => {
    const res = await ctx.app.inject({
      method: "GET",
      url: `/api/v2/zone_sets/${"a".repeat(150)}?key=${key()}`,
    });
    assert.equal(res.statusCode, 414);
    assert.equal(res.json().status, "error");
    assert.equal(res.json().error.code, "path_parameter_too_long");
  });

  it("answers 400 invalid_json for a malformed or empty JSON body", async () => {
    for (const payload of ['{"message": ', ""]) {
      const res = await ctx.app.inject({
        method: "POST",
        url: `/api/v2/debug/echo?key=${key()}`,
        headers: { "content-type": "application/json" },
        payload,
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().error.code, "invalid_json");
    }
  });

  it("answers 415 unsupported_media_type for a body that is not JSON", async () => {
    const res = await ctx.app.inject({
      method: "POST",
      url: `/api/v2/debug/echo?key=${key()}`,
      headers: { "content-type": "application/xml" },
      payload: "<message>hi</message>",
    });
    assert.equal(res.statusCode, 415);
    assert.equal(res.json().error.code, "unsupported_media_type");
  });

  it("answers 431 headers_too_large with Connection: close for a 20 kB query string", async () => {
    await ctx.app.listen({ port: 0, host: "127.0.0.1" });
    const address = ctx.app.server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    const url = `/api/v2/account?key=${key()}&pad=${"x".repeat(20_000)}`;
    const response = await rawExchange(port, `GET ${url} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    const [head, payload] = response.split("\r\n\r\n");
    assert.match(head, /^HTTP\/1\.1 431 /);
    assert.match(head, /\r\nConnection: close\r\n/i);
    assert.equal(JSON.parse(payload).error.code, "headers_too_large");
  });
});
