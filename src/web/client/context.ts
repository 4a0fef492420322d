import { ApiError, type Account, type NetworkInfo, type StreetflowApi } from "./api.js";
import type { StreetMap } from "./map.js";
import { messageOf, setStatus } from "./ui.js";

/** Page-wide events, so views refresh each other without importing each other. */
export interface AppEvents {
  /** A zone set was created or deleted. */
  "zone-sets-changed": undefined;
  /** The editor saved a new zone set (its uuid): the list shows it on the map. */
  "zone-set-created": string;
  /** An analysis was created, cancelled or deleted. */
  "analyses-changed": undefined;
  /** The network selector switched country. */
  "network-changed": NetworkInfo;
}

export class EventBus {
  private readonly target = new EventTarget();

  emit<K extends keyof AppEvents>(type: K, detail: AppEvents[K]): void {
    this.target.dispatchEvent(new CustomEvent(type, { detail }));
  }

  on<K extends keyof AppEvents>(type: K, listener: (detail: AppEvents[K]) => void): void {
    this.target.addEventListener(type, (e) => listener((e as CustomEvent<AppEvents[K]>).detail));
  }
}

/** What every view gets: the API client, the one shared map, the imported networks and the event bus. */
export interface AppContext {
  api: StreetflowApi;
  account: Account;
  /**
   * The user's e-mail for `insight_login_email`: as entered at sign-in, or the organization's only user;
   * undefined when the organization has several and none was entered (forms then ask for it).
   */
  userEmail: string | undefined;
  map: StreetMap;
  networks: NetworkInfo[];
  /** The network chosen in the selector (first the one with the most recent trips, see networks.ts). */
  currentNetwork: () => NetworkInfo | undefined;
  events: EventBus;
  /** Signs out on a 401 (revoked key); otherwise shows `prefix: message` as an error in `statusEl`. */
  showError: (statusEl: HTMLElement, prefix: string, err: unknown) => void;
}

export function errorReporter(signOut: () => void): AppContext["showError"] {
  return (statusEl, prefix, err) => {
    if (err instanceof ApiError && err.status === 401) {
      signOut();
      return;
    }
    setStatus(statusEl, `${prefix}: ${messageOf(err)}`, "error");
  };
}

/**
 * A tab of the sidebar. `activate` runs when its panel is shown and `deactivate` when another is, so a view
 * can show its own map layers only while it is in front.
 */
export interface View {
  id: string;
  activate?: () => void;
  deactivate?: () => void;
}
