import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getHeapStatistics } from "node:v8";
import { gzipSync } from "node:zlib";
import { readTraceFile } from "../../src/engine/ingest/read-traces.js";
import { SHARED_DATA as SHARED } from "../helpers/shared-data.js";
import { collectGarbage } from "../../bench/lib/collect-garbage.js";
import {
  formatProblem,
  handRecord,
  type TracePoint,
  type TraceRowSink,
} from "../../src/engine/ingest/types.js";

async function readAll(path: string) {
  const points: TracePoint[] = [];
  const problems: string[] = [];
  for await (const batch of readTraceFile(path))
    for (const r of batch) {
      if (r.point) points.push(r.point);
      else problems.push(formatProblem(r.problem));
    }
  return { points, problems };
}

/** The same file handed to a sink (`eachRow` where the reader has it), as rows of fields and problems. */
async function readAllBySink(path: string) {
  const rows: unknown[][] = [];
  const problems: string[] = [];
  const sink: TraceRowSink = {
    stopped: false,
    point: (deviceId, fix, vehicleClass, purpose, incomeBand) =>
      rows.push([
        deviceId,
        fix.lon,
        fix.lat,
        fix.t,
        fix.speed,
        fix.heading,
        vehicleClass,
        purpose,
        incomeBand,
      ]),
    problem: (problem) => problems.push(formatProblem(problem)),
  };
  for await (const batch of readTraceFile(path))
    if (batch.eachRow) batch.eachRow(sink);
    else for (const record of batch) handRecord(sink, record);
  return { rows, problems };
}

/** Points as the rows a sink sees. */
const rowsOf = (points: TracePoint[]) =>
  points.map((p) => [
    p.deviceId,
    p.lon,
    p.lat,
    p.t,
    p.speed,
    p.heading,
    p.vehicleClass,
    p.purpose,
    p.incomeBand,
  ]);

const CSV = [
  "device_id,timestamp,lat,lon,speed,heading,vehicle_class",
  "a,2026-01-05T08:00:00Z,52.5,13.4,12.5,90,bicycle",
  '"b,1",1767600000,52.6,13.5,,,',
  "a,1767600010000,52.5,13.41,,,",
  "a,2026-01-05 09:00:00+0100,123.4,13.4,,,",
  "a,yesterday,52.5,13.4,,,",
  ",2026-01-05T08:00:00Z,52.5,13.4,,,",
  "a,2026-01-05T08:00:30,52.5,13.42,,,tram",
  "",
  "c,2026-01-05T09:00:00+01:00,-33.9,151.2,,,",
].join("\n");

const GPX = `<?xml version="1.0"?>
<gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1">
<wpt lat="1" lon="1"><time>2026-01-05T08:00:00Z</time></wpt>
<trk><name>van 7</name><trkseg>
<trkpt lat="52.5" lon="13.4"><time>2026-01-05T08:00:00Z</time><speed>3.5</speed></trkpt>
<trkpt lat="52.51" lon="13.4"><time>2026-01-05T08:00:10Z</time></trkpt>
</trkseg></trk>
<trk><trkseg>
<trkpt lat="52.6" lon="13.5"><ele>40</ele></trkpt>
<trkpt lat="99" lon="13.5"><time>2026-01-05T08:00:10Z</time></trkpt>
<trkpt lat="52.61" lon="13.5"><time>2026-01-05T08:00:20Z</time></trkpt>
</trkseg></trk>
</gpx>`;

const GEOJSON = JSON.stringify({
  type: "FeatureCollection",
  features: [
    {
      type: "Feature",
      geometry: { type: "Point", coordinates: [13.4, 52.5] },
      properties: { device_id: "p1", timestamp: "2026-01-05T08:00:00Z", vehicle_class: "pedestrian" },
    },
    {
      type: "Feature",
      geometry: {
        type: "LineString",
        coordinates: [
          [13.4, 52.5],
          [13.41, 52.5],
          [200, 52.5],
        ],
      },
      properties: {
        name: "line",
        coordTimes: ["2026-01-05T08:00:00Z", "2026-01-05T08:00:10Z", "2026-01-05T08:00:20Z"],
      },
    },
    { type: "Feature", geometry: { type: "Polygon", coordinates: [] }, properties: {} },
    { type: "Feature", geometry: { type: "LineString", coordinates: [[13.4, 52.5]] }, properties: {} },
  ],
});

describe("trace readers", () => {
  let dir: string;
  const path = (name: string) => join(dir, name);
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "sf-readers-"));
    const files: Record<string, string> = { "t.csv": CSV, "t.gpx": GPX, "t.geojson": GEOJSON };
    for (const [name, text] of Object.entries(files)) {
      writeFileSync(path(name), text);
      writeFileSync(path(`${name}.gz`), gzipSync(text));
    }
    writeFileSync(path("nohead.csv"), "x9,1767600000,52.5,13.4\nx9,1767600060,52.5,13.41\n");
    writeFileSync(
      path("osrm.csv"),
      "TrackID,Latitude,Longitude,Time\n7,52.5,13.4,1767600000\n7,52.5,13.41,\n",
    );
    writeFileSync(
      path("attributes.csv"),
      [
        "device_id,timestamp,lat,lon,speed,heading,vehicle_class,trip_purpose,income_band",
        "s1,1767600000,52.5,13.4,,,personal,hbw,3",
        "s2,1767600000,52.5,13.4,,,heavy_commercial,NHBW,0",
        "s3,1767600000,52.5,13.4,,,,,",
        "s4,1767600000,52.5,13.4,,,,shopping,1",
        "s4,1767600000,52.5,13.4,,,,hbo,2.5",
        "s4,1767600000,52.5,13.4,,,,hbo,-1",
        "s4,1767600000,52.5,13.4,,,,hbo,200",
      ].join("\n"),
    );
    writeFileSync(path("nocols.csv"), "who,when,where\nx,1,2\n");
    writeFileSync(path("bom.csv"), "\uFEFFdevice_id,timestamp,lat,lon\r\nq,1767600000,52.5,13.4\r\n");
    writeFileSync(path("broken.gpx"), GPX.replace("</trkseg></trk>\n<trk>", "</trkseg></trkx>\n<trk>"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const suffix of ["", ".gz"]) {
    it(`reads CSV${suffix}: ISO and epoch s/ms times, quoted ids, optional columns, bad rows by line`, async () => {
      const { points, problems } = await readAll(path(`t.csv${suffix}`));
      assert.deepEqual(points, [
        {
          deviceId: "a",
          lon: 13.4,
          lat: 52.5,
          t: Date.UTC(2026, 0, 5, 8),
          speed: 12.5,
          heading: 90,
          vehicleClass: "bicycle",
        },
        { deviceId: "b,1", lon: 13.5, lat: 52.6, t: 1767600000000 },
        { deviceId: "a", lon: 13.41, lat: 52.5, t: 1767600010000 },
        { deviceId: "c", lon: 151.2, lat: -33.9, t: Date.UTC(2026, 0, 5, 8) },
      ]);
      const f = `t.csv${suffix}`;
      assert.deepEqual(problems, [
        `${f}:5: latitude 123.4 is out of range`,
        `${f}:6: timestamp "yesterday" is not ISO-8601 or epoch`,
        `${f}:7: device id is missing`,
        `${f}:8: vehicle class "tram" is not one of personal, medium_commercial, heavy_commercial, bicycle, pedestrian, bus, rail`,
      ]);
    });
  }

  it("reads the optional trip_purpose and income_band columns; bad values are bad rows", async () => {
    const { points, problems } = await readAll(path("attributes.csv"));
    assert.deepEqual(
      points.map((p) => [p.deviceId, p.purpose, p.incomeBand]),
      [
        ["s1", "hbw", 3],
        ["s2", "nhbw", 0],
        ["s3", undefined, undefined],
      ],
    );
    assert.deepEqual(problems, [
      'attributes.csv:5: trip purpose "shopping" is not one of hbw, hbo, nhbw, wbo',
      'attributes.csv:6: income band "2.5" is not an integer from 0 to 127',
      'attributes.csv:7: income band "-1" is not an integer from 0 to 127',
      'attributes.csv:8: income band "200" is not an integer from 0 to 127',
    ]);
  });

  it("reads trip_purpose and income_band properties of GeoJSON points", async () => {
    const point = (properties: Record<string, unknown>) => ({
      type: "Feature",
      geometry: { type: "Point", coordinates: [13.4, 52.5] },
      properties: { device_id: "g", timestamp: 1767600000, ...properties },
    });
    writeFileSync(
      path("attributes.geojson"),
      JSON.stringify({
        type: "FeatureCollection",
        features: [
          point({ trip_purpose: "wbo", income_band: 2 }),
          point({ purpose: "hbo", income_band: "x" }),
        ],
      }),
    );
    const { points, problems } = await readAll(path("attributes.geojson"));
    assert.deepEqual(
      points.map((p) => [p.purpose, p.incomeBand]),
      [["wbo", 2]],
    );
    assert.deepEqual(problems, [
      'attributes.geojson:2: feature 2: income band "x" is not an integer from 0 to 127',
    ]);
  });

  it("reads a CSV without a header row in the default column order", async () => {
    const { points, problems } = await readAll(path("nohead.csv"));
    assert.deepEqual(problems, []);
    assert.deepEqual(
      points.map((p) => [p.deviceId, p.t, p.lon]),
      [
        ["x9", 1767600000000, 13.4],
        ["x9", 1767600060000, 13.41],
      ],
    );
  });

  it("accepts the OSRM header TrackID,Latitude,Longitude,Time; a row without time is bad", async () => {
    const { points, problems } = await readAll(path("osrm.csv"));
    assert.deepEqual(points, [{ deviceId: "7", lon: 13.4, lat: 52.5, t: 1767600000000 }]);
    assert.deepEqual(problems, ["osrm.csv:3: timestamp is missing"]);
  });

  it("reads a spreadsheet export: byte order mark and CRLF line ends", async () => {
    const { points, problems } = await readAll(path("bom.csv"));
    assert.deepEqual(problems, []);
    assert.deepEqual(points, [{ deviceId: "q", lon: 13.4, lat: 52.5, t: 1767600000000 }]);
  });

  it("reports a header lacking needed columns once", async () => {
    const { points, problems } = await readAll(path("nocols.csv"));
    assert.equal(points.length, 0);
    assert.equal(problems.length, 1);
    assert.match(problems[0], /^nocols\.csv:1: header lacks column\(s\) device, time, lat, lon/);
  });

  for (const suffix of ["", ".gz"]) {
    it(`reads GPX${suffix}: a device per trk (its name or file#n), bad points by line`, async () => {
      const { points, problems } = await readAll(path(`t.gpx${suffix}`));
      const f = `t.gpx${suffix}`;
      assert.deepEqual(points, [
        { deviceId: "van 7", lon: 13.4, lat: 52.5, t: Date.UTC(2026, 0, 5, 8), speed: 3.5 },
        { deviceId: "van 7", lon: 13.4, lat: 52.51, t: Date.UTC(2026, 0, 5, 8, 0, 10) },
        { deviceId: `${f}#2`, lon: 13.5, lat: 52.61, t: Date.UTC(2026, 0, 5, 8, 0, 20) },
      ]);
      assert.deepEqual(problems, [`${f}:9: timestamp is missing`, `${f}:10: latitude 99 is out of range`]);
    });
  }

  it("keeps the points before malformed GPX and reports where it broke", async () => {
    const { points, problems } = await readAll(path("broken.gpx"));
    assert.equal(points.length, 2);
    assert.equal(problems.length, 1);
    assert.match(problems[0], /^broken\.gpx:7: unreadable XML, rest of file skipped/);
  });

  for (const suffix of ["", ".gz"]) {
    it(`reads GeoJSON${suffix}: Point features and LineStrings with coordTimes`, async () => {
      const { points, problems } = await readAll(path(`t.geojson${suffix}`));
      const f = `t.geojson${suffix}`;
      assert.deepEqual(points, [
        { deviceId: "p1", lon: 13.4, lat: 52.5, t: Date.UTC(2026, 0, 5, 8), vehicleClass: "pedestrian" },
        { deviceId: "line", lon: 13.4, lat: 52.5, t: Date.UTC(2026, 0, 5, 8) },
        { deviceId: "line", lon: 13.41, lat: 52.5, t: Date.UTC(2026, 0, 5, 8, 0, 10) },
      ]);
      assert.deepEqual(problems, [
        `${f}:2: feature 2: point 3: longitude 200 is out of range`,
        `${f}:3: feature 3: geometry Polygon is not a Point, LineString or MultiPoint`,
        `${f}:4: feature 4: LineString needs a "times" or "coordTimes" array as long as its coordinates`,
      ]);
    });
  }
});

describe("CSV rows read in place", () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), "sf-csv-rows-"))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Deterministic pseudo-random picks (a linear congruential generator), so a failure can be replayed. */
  function picker(seed: number) {
    let state = seed;
    return <T>(values: readonly T[]): T => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return values[Math.floor((state / 2147483648) * values.length)];
    };
  }
  const NUMBERS = [
    "43.7",
    "-43.7",
    "7.412345",
    "-0",
    "-0.0",
    "0",
    "90",
    "90.0000001",
    "-180",
    "180.5",
    "1e1",
    " 43.7",
    "43.7 ",
    "",
    ".5",
    "5.",
    "-.5",
    "0x10",
    "43.123456789012345",
    "12345678901234567",
    "+5",
    "NaN",
    "007.25",
    "1.000000000000001",
    "-",
    "4..2",
  ];
  const TIMES = [
    "2025-03-01T06:02:11.000Z",
    "2025-03-01T06:05:11.250Z",
    "2025-03-01T06:59:59.999Z",
    "2025-03-01T07:00:00.000Z",
    "2025-03-01T06:61:00.000Z",
    "2025-03-01 06:02:11",
    "1740809000",
    "1740809000123",
    "",
    "later",
    "2025-03-01T07:02:11.000+01:00",
    " 2025-03-01T06:02:12.000Z",
  ];
  const OPTIONAL = [
    "",
    " ",
    "3.5",
    "abc",
    "personal",
    "PERSONAL",
    "tram",
    "hbo",
    " HBW",
    "xx",
    "1",
    "128",
    "-1",
  ];

  // A quoted device id makes a row take the full reader (quotes, then splitCsvLine and pointOfRow); the
  // same rows unquoted are read in place. Both must give the very same points and problems.
  it("gives what the full reader gives, row for row, valid or not", async () => {
    const pick = picker(7);
    const headers = [
      "device_id,timestamp,lat,lon,speed,heading,vehicle_class,trip_purpose,income_band",
      "lat,lon,t,id,vehicle_class",
    ];
    for (const [h, header] of headers.entries()) {
      const rows: string[][] = [];
      for (let i = 0; i < 3000; i++) {
        const device = pick(["a", "dev-1", " a", "a ", "", "d\u00e9v", "x y"]);
        const end = pick(["", "", "\r"]);
        if (h === 1) rows.push([pick(NUMBERS), pick(NUMBERS), pick(TIMES), device, pick(OPTIONAL) + end]);
        else {
          const cells = [
            device,
            pick(TIMES),
            pick(NUMBERS),
            pick(NUMBERS),
            ...Array.from({ length: 5 }, () => pick(OPTIONAL)),
          ];
          rows.push(cells.slice(0, pick([3, 4, 5, 7, 9, 9, 9])).concat(end ? [end] : []));
        }
      }
      const deviceAt = h === 1 ? 3 : 0;
      const fileOf = (name: string, quoted: boolean) => {
        const lines = rows.map((r) => r.map((c, i) => (quoted && i === deviceAt ? `"${c}"` : c)).join(","));
        writeFileSync(join(dir, name), [header, ...lines].join("\n"));
        return join(dir, name);
      };
      const inPlace = await readAll(fileOf(`plain-${h}.csv`, false));
      const inFull = await readAll(fileOf(`quoted-${h}.csv`, true));
      assert.ok(
        inPlace.points.length > 100 && inPlace.problems.length > 500,
        `both kinds of rows: ${inPlace.points.length} points, ${inPlace.problems.length} problems`,
      );
      assert.deepEqual(inPlace.points, inFull.points);
      assert.deepEqual(
        inPlace.problems.map((p) => p.replace("plain-", "")),
        inFull.problems.map((p) => p.replace("quoted-", "")),
      );
      // Handed to a sink without a point object per row (the ingest's way), the rows read the same.
      for (const [name, read] of [
        [`plain-${h}.csv`, inPlace],
        [`quoted-${h}.csv`, inFull],
      ] as const) {
        const bySink = await readAllBySink(join(dir, name));
        assert.deepEqual(bySink.rows, rowsOf(read.points));
        assert.deepEqual(bySink.problems, read.problems);
      }
    }
  });
});

describe("CSV text handed on in pieces", () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), "sf-csv-pieces-"))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  // The reader gets a file's text 16 KB at a time (open-input.ts); a row or a character may straddle two
  // pieces, and a piece may begin with the line break of an empty line.
  it("reads rows, characters and line numbers alike across the pieces", async () => {
    const PIECE = 16 * 1024;
    const lines = ["device_id,timestamp,lat,lon"];
    const row = (device: string) => `${device},2026-01-05T08:00:00Z,52.5,13.4`;
    const bytes = () => lines.reduce((n, line) => n + Buffer.byteLength(line) + 1, 0);
    const fillTo = (end: number) => {
      while (bytes() < end - 100) lines.push(row(`d${lines.length}`));
    };
    fillTo(PIECE);
    // This line's break is the piece's last byte; the next piece begins with an empty line, then a bad row.
    lines.push(row("p".repeat(PIECE - 1 - bytes() - row("").length)));
    lines.push("", "bad,2026-01-05T08:00:00Z,x,13.4");
    fillTo(2 * PIECE);
    // An "é" (two bytes) split by the next piece's start.
    const straddling = `${"x".repeat(2 * PIECE - 1 - bytes())}\u00e9`;
    lines.push(row(straddling), row("after"), "last,2026-01-05T08:00:00Z,52.5,y");
    fillTo(3 * PIECE + 500);
    const path = join(dir, "pieces.csv");
    writeFileSync(path, lines.join("\n"));

    const { points, problems } = await readAll(path);
    const badLines = lines.flatMap((line, i) =>
      line.startsWith("bad") || line.startsWith("last") ? [i + 1] : [],
    );
    assert.deepEqual(
      problems.map((p) => Number(p.split(":")[1])),
      badLines,
    );
    assert.equal(points.length, lines.length - 1 - badLines.length - 1);
    assert.ok(points.some((p) => p.deviceId === straddling));
    assert.ok(points.some((p) => p.deviceId === "after"));
  });
});

/** Bytes in V8's heap after a full collection. */
function heapUsedAfterGc(): number {
  collectGarbage();
  return getHeapStatistics().used_heap_size;
}

describe("CSV device ids", () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), "sf-csv-ids-"))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  // Real device ids are long (UUIDs, hashed advertising ids): cut from the text as they are, each would keep
  // its whole 16 KB piece of the file alive for as long as a trip holds it.
  it("keep none of the file's text alive, read in place or in full, device after device or interleaved", async () => {
    const uuid = (d: number) =>
      `${d.toString(16).padStart(8, "0")}-4b1d-4e57-9a7c-0c0ffee0${String(d).padStart(4, "0")}`;
    const t0 = Date.parse("2026-01-05T00:00:00Z");
    const rows = ["device_id,timestamp,lat,lon"];
    for (let i = 0; i < 40_000; i++) {
      // Device after device for the first half, interleaved after; every tenth id quoted (read in full).
      const d = i < 20_000 ? Math.floor(i / 400) : i % 300;
      const id = i % 10 === 0 ? `"${uuid(d)}"` : uuid(d);
      rows.push(`${id},${new Date(t0 + i * 1000).toISOString()},52.5${i % 100},13.4${i % 97}`);
    }
    const path = join(dir, "uuids.csv");
    writeFileSync(path, rows.join("\n"));
    const fileBytes = rows.reduce((n, r) => n + r.length + 1, 0);
    rows.length = 0;

    const readIds = async (into: string[]) => {
      for await (const batch of readTraceFile(path))
        for (const r of batch) if (r.point) into.push(r.point.deviceId);
    };
    // Read once before measuring: the reader's compiled code lives in the heap too.
    await readIds([]);
    const held: string[] = [];
    const before = heapUsedAfterGc();
    await readIds(held);
    const retained = heapUsedAfterGc() - before;

    assert.equal(held.length, 40_000);
    assert.equal(held[0], uuid(0));
    assert.equal(held[39_999], uuid(39_999 % 300));
    assert.equal(new Set(held).size, 300);
    // The array of 40,000 references is ~0.3 MB; the file's text, 3 MB, would take ~5 MB.
    assert.ok(retained < fileBytes / 4, `${retained} bytes kept alive reading ${fileBytes}`);
  });
});

describe("trace readers on the shared sample data", { skip: !SHARED && "no ../shared/data" }, () => {
  it("reads the GraphHopper GPX samples with the point counts of SOURCE.md", async () => {
    const dir = join(SHARED!, "graphhopper-mapmatching-samples");
    const counts: Record<string, number> = {};
    for (const f of ["test1.gpx", "tour2-with-loop.gpx", "tour3-with-long-edge.gpx", "tour4-with-uturn.gpx"])
      counts[f] = (await readAll(join(dir, f))).points.length;
    assert.deepEqual(counts, {
      "test1.gpx": 264,
      "tour2-with-loop.gpx": 12,
      "tour3-with-long-edge.gpx": 7,
      "tour4-with-uturn.gpx": 5,
    });
  });

  it("treats the untimed Andorra GPX as 21 bad rows", async () => {
    const { points, problems } = await readAll(
      join(SHARED!, "graphhopper-mapmatching-samples/andorra_for_map_matching.gpx"),
    );
    assert.equal(points.length, 0);
    assert.equal(problems.length, 21);
  });

  it("reads the Barefoot sample format (JSON array of WKT points): 1,194 samples of device \\x0001", async () => {
    const { points, problems } = await readAll(join(SHARED!, "barefoot-munich-trace/x0001-001.json"));
    assert.deepEqual(problems, []);
    assert.equal(points.length, 1194);
    assert.deepEqual(points[0], {
      deviceId: "\\x0001",
      lon: 11.564388282625075,
      lat: 48.16350662940509,
      t: Date.UTC(2014, 8, 10, 4, 54, 7),
    });
  });

  it("reads all 75,000 rows of the OSRM Berlin CSV.gz as bad rows: its Time column is empty", async () => {
    const { points, problems } = await readAll(
      join(SHARED!, "osrm-osm-public-traces/berlin_gps_traces.csv.gz"),
    );
    assert.equal(points.length, 0);
    assert.equal(problems.length, 75_000);
    assert.equal(problems[0], "berlin_gps_traces.csv.gz:2: timestamp is missing");
    assert.equal(problems.at(-1), "berlin_gps_traces.csv.gz:75001: timestamp is missing");
  });
});
