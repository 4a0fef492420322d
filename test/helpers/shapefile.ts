import { crc32 } from "node:zlib";

/**
 * Builds a zipped polygon shapefile (.shp + .shx + .dbf, stored uncompressed)
 * so tests exercise the real shapefile reader without fixture files.
 */
export interface ShapePolygon {
  ring: [number, number][];
  attributes: Record<string, string | number>;
}

function bboxOf(points: [number, number][]): number[] {
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
}

function mainHeader(fileBytes: number, bbox: number[]): Buffer {
  const b = Buffer.alloc(100);
  b.writeInt32BE(9994, 0);
  b.writeInt32BE(fileBytes / 2, 24);
  b.writeInt32LE(1000, 28);
  b.writeInt32LE(5, 32); // polygon
  bbox.forEach((v, i) => b.writeDoubleLE(v, 36 + i * 8));
  return b;
}

function polygonRecord(index: number, ring: [number, number][]): Buffer {
  const content = Buffer.alloc(44 + 4 + ring.length * 16);
  content.writeInt32LE(5, 0);
  bboxOf(ring).forEach((v, i) => content.writeDoubleLE(v, 4 + i * 8));
  content.writeInt32LE(1, 36); // parts
  content.writeInt32LE(ring.length, 40);
  content.writeInt32LE(0, 44);
  ring.forEach(([x, y], i) => {
    content.writeDoubleLE(x, 48 + i * 16);
    content.writeDoubleLE(y, 56 + i * 16);
  });
  const header = Buffer.alloc(8);
  header.writeInt32BE(index + 1, 0);
  header.writeInt32BE(content.length / 2, 4);
  return Buffer.concat([header, content]);
}

function shpAndShx(shapes: ShapePolygon[]): { shp: Buffer; shx: Buffer } {
  const bbox = bboxOf(shapes.flatMap((s) => s.ring));
  const records = shapes.map((s, i) => polygonRecord(i, s.ring));
  const shpBytes = 100 + records.reduce((n, r) => n + r.length, 0);
  const index = Buffer.alloc(records.length * 8);
  let offset = 100;
  records.forEach((r, i) => {
    index.writeInt32BE(offset / 2, i * 8);
    index.writeInt32BE((r.length - 8) / 2, i * 8 + 4);
    offset += r.length;
  });
  return {
    shp: Buffer.concat([mainHeader(shpBytes, bbox), ...records]),
    shx: Buffer.concat([mainHeader(100 + index.length, bbox), index]),
  };
}

/** dBase III table; every attribute is written as a 40-character text (C) or numeric (N) field. */
function dbf(shapes: ShapePolygon[]): Buffer {
  const names = Object.keys(shapes[0].attributes);
  const numeric = names.map((n) => typeof shapes[0].attributes[n] === "number");
  const width = 40;
  const header = Buffer.alloc(32);
  header.writeUInt8(3, 0);
  header.writeUInt32LE(shapes.length, 4);
  header.writeUInt16LE(32 + names.length * 32 + 1, 8);
  header.writeUInt16LE(1 + names.length * width, 10);
  const fields = names.map((name, i) => {
    const f = Buffer.alloc(32);
    f.write(name.slice(0, 10), 0, "latin1");
    f.write(numeric[i] ? "N" : "C", 11, "latin1");
    f.writeUInt8(width, 16);
    return f;
  });
  const rows = shapes.map((s) => {
    const cells = names.map((n, i) => {
      const v = String(s.attributes[n]);
      return numeric[i] ? v.padStart(width) : v.padEnd(width);
    });
    return Buffer.from(" " + cells.join(""), "latin1");
  });
  return Buffer.concat([header, ...fields, Buffer.from([0x0d]), ...rows, Buffer.from([0x1a])]);
}

/** A zip archive of uncompressed entries. */
function zip(files: Record<string, Buffer>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, data] of Object.entries(files)) {
    const nameBytes = Buffer.from(name);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    centrals.push(central, nameBytes);
    offset += 30 + nameBytes.length + data.length;
  }
  const centralSize = centrals.reduce((n, b) => n + b.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(files).length, 8);
  end.writeUInt16LE(Object.keys(files).length, 10);
  end.writeUInt32LE(centralSize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, ...centrals, end]);
}

export function zippedShapefile(shapes: ShapePolygon[], layer = "zones"): Buffer {
  const { shp, shx } = shpAndShx(shapes);
  return zip({ [`${layer}.shp`]: shp, [`${layer}.shx`]: shx, [`${layer}.dbf`]: dbf(shapes) });
}
