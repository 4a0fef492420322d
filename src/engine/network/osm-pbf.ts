import { createReadStream } from "node:fs";
import { OSMTransform, type OSMOptions } from "osm-pbf-parser-node";
import { relationOf, type OsmMember, type OsmReader, type OsmRelation, type OsmWay } from "./osm-reader.js";

interface PbfItem {
  type?: "node" | "way" | "relation";
  id: number;
  lon: number;
  lat: number;
  refs: number[];
  members?: OsmMember[];
  tags?: Record<string, string>;
}

/** Streams an .osm.pbf file; the parser hands out whole blocks, so items are walked in batches. */
export class PbfReader implements OsmReader {
  constructor(private readonly file: string) {}

  async readWays(onWay: (way: OsmWay) => void, onRelation?: (relation: OsmRelation) => void): Promise<void> {
    await this.each({ withTags: { node: false, way: true, relation: onRelation !== undefined } }, (item) => {
      if (item.type === "way") onWay({ id: item.id, refs: item.refs, tags: item.tags ?? {} });
      else if (item.type === "relation" && onRelation)
        onRelation(relationOf(item.id, item.members ?? [], item.tags ?? {}));
    });
  }

  async readNodes(onNode: (id: number, lon: number, lat: number) => void): Promise<void> {
    await this.each({ withTags: false }, (item) => {
      if (item.type === "node") onNode(item.id, item.lon, item.lat);
    });
  }

  private async each(options: OSMOptions, fn: (item: PbfItem) => void): Promise<void> {
    const source = createReadStream(this.file);
    const items = source.pipe(new OSMTransform(options));
    source.on("error", (err) => items.destroy(err));
    for await (const batch of items as AsyncIterable<PbfItem[]>) for (const item of batch) fn(item);
  }
}
