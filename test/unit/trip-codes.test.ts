import { collect } from "../helpers/collect.js";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { VEHICLE_CLASS_CODES } from "../../src/engine/trips/codes.js";
import { tripsToColumns } from "../../src/engine/trips/columns.js";
import { VEHICLE_CLASSES } from "../../src/engine/trips/types.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { streetTrip } from "../helpers/street-scenario.js";

describe("stored vehicle class codes", () => {
  it("keep the codes stores already hold, and give bus and rail the next ones", () => {
    assert.deepEqual(VEHICLE_CLASS_CODES, {
      personal: 0,
      medium_commercial: 1,
      heavy_commercial: 2,
      bicycle: 3,
      pedestrian: 4,
      bus: 5,
      rail: 6,
    });
    const trips = VEHICLE_CLASSES.map((vehicleClass, i) =>
      streetTrip({ device: `d${i}`, localIso: "2025-01-06T08:00:00", minutes: 5, vehicleClass }),
    );
    const cols = tripsToColumns(trips);
    assert.deepEqual(
      [...cols.vehicleClass],
      VEHICLE_CLASSES.map((c) => VEHICLE_CLASS_CODES[c]),
    );
  });

  it("store and scan bus and rail riders by class", async () => {
    const store = new SqliteStore(":memory:");
    const trip = (device: string, vehicleClass: "bus" | "rail" | "personal") =>
      streetTrip({ device, localIso: "2025-01-06T08:00:00", minutes: 5, vehicleClass });
    await store.trips.appendTrips("mc", [trip("a", "bus"), trip("b", "rail"), trip("c", "personal")]);
    const scanned = async (vehicleClasses: ("bus" | "rail")[]) =>
      (await collect(store.trips.scan("mc", { vehicleClasses }))).map((c) => c.count);
    assert.deepEqual(await scanned(["bus"]), [1]);
    assert.deepEqual(await scanned(["bus", "rail"]), [2]);
    assert.deepEqual(await store.tripStats.monthsWithTrips("mc", ["rail"]), [{ year: 2025, month: 1 }]);
    await store.close();
  });
});
