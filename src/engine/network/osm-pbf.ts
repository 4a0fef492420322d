import { createReadStream } from "node:fs";
import { OSMTransform, type OSMOptions } from "osm-pbf-parser-node";
import { relationOf, type OsmMember, type OsmPass, type OsmReader } from "./osm-reader.js";

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

  async read({ onNode, onWay, wayTags = false, onRelation }: OsmPass): Promise<void> {
    const withTags = { node: false, way: onWay !== undefined && wayTags, relation: onRelation !== undefined };
    await this.each({ withTags }, (item) => {
      if (item.type === "node") onNode?.(item.id, item.lon, item.lat);
      else if (item.type === "way") onWay?.({ id: item.id, refs: item.refs, tags: item.tags ?? {} });
      else if (item.type === "relation")
        onRelation?.(relationOf(item.id, item.members ?? [], item.tags ?? {}));
    });
  }

  private async each(options: OSMOptions, fn: (item: PbfItem) => void): Promise<void> {
    const source = createReadStream(this.file);
    const items = source.pipe(new OSMTransform(options));
    source.on("error", (err) => items.destroy(err));
    for await (const batch of items as AsyncIterable<PbfItem[]>) for (const item of batch) fn(item);
  }
}
