import { fail } from "../../domain/errors.js";
import { statusEntry } from "./lifecycle.js";
import { vendorOptionsOf } from "../../domain/analyses/vendor-options.js";
import type { Store } from "../ports/store.js";
import type { StoredAnalysis } from "../../domain/records.js";

const TIMEOUT_MS = 10_000;

/** An organization's completion webhook must be an absolute http(s) URL. */
export function checkWebhookUrl(value: string): string {
  let url: URL | null = null;
  try {
    url = new URL(value.trim());
  } catch {
    url = null;
  }
  if (!url || !["http:", "https:"].includes(url.protocol) || value.length > 2000)
    throw fail(
      "invalid_url",
      { reason: "url must be an absolute http or https URL of at most 2000 characters" },
      "url",
    );
  return url.href;
}

/**
 * What the job runner calls when an analysis finishes: enable_completion_email
 * has no mail server to use, so the organization's webhook gets the analysis'
 * status entry. One attempt; a failure is logged and changes nothing else.
 */
export function completionNotifier(
  store: Store,
  log: (line: string) => void,
  send: typeof fetch = fetch,
): (analysis: StoredAnalysis) => Promise<void> {
  return async (analysis) => {
    if (!vendorOptionsOf(analysis.spec).completionNotice) return;
    const url = await store.notifications.completionWebhook(analysis.orgId);
    if (!url) return;
    const body = {
      event: "analysis_finished",
      ...statusEntry(analysis),
      insight_login_email: analysis.spec.loginEmail,
    };
    try {
      const res = await send(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      if (!res.ok) log(`completion webhook of analysis ${analysis.uuid}: the URL answered ${res.status}`);
    } catch (e) {
      log(`completion webhook of analysis ${analysis.uuid} failed: ${(e as Error).message}`);
    }
  };
}
