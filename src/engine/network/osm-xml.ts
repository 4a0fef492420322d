import { createReadStream } from "node:fs";
import type { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { SaxesParser } from "saxes";
import { relationOf, type OsmMember, type OsmPass, type OsmReader, type OsmWay } from "./osm-reader.js";

/** Streams OSM XML (optionally gzip-compressed) through a SAX parser. */
export class XmlReader implements OsmReader {
  constructor(
    private readonly file: string,
    private readonly gzip: boolean,
  ) {}

  async read({ onNode, onWay, wayTags = false, onRelation }: OsmPass): Promise<void> {
    let way: OsmWay | null = null;
    let relation: { id: number; members: OsmMember[]; tags: Record<string, string> } | null = null;
    await this.parse((parser) => {
      parser.on("opentag", (tag) => {
        const a = tag.attributes;
        if (tag.name === "node") onNode?.(Number(a.id), Number(a.lon), Number(a.lat));
        else if (tag.name === "way") way = onWay ? { id: Number(a.id), refs: [], tags: {} } : null;
        else if (tag.name === "relation")
          relation = onRelation ? { id: Number(a.id), members: [], tags: {} } : null;
        else if (way !== null) {
          if (tag.name === "nd") way.refs.push(Number(a.ref));
          else if (tag.name === "tag" && wayTags) way.tags[a.k] = a.v;
        } else if (relation !== null) {
          if (tag.name === "member")
            relation.members.push({
              type: a.type as OsmMember["type"],
              ref: Number(a.ref),
              role: a.role ?? "",
            });
          else if (tag.name === "tag") relation.tags[a.k] = a.v;
        }
      });
      parser.on("closetag", (tag) => {
        if (tag.name === "way" && way) {
          onWay?.(way);
          way = null;
        } else if (tag.name === "relation" && relation) {
          onRelation?.(relationOf(relation.id, relation.members, relation.tags));
          relation = null;
        }
      });
    });
  }

  private async parse(listen: (parser: SaxesParser<{ xmlns: false }>) => void): Promise<void> {
    const parser = new SaxesParser<{ xmlns: false }>({ xmlns: false });
    listen(parser);
    for await (const chunk of this.open()) parser.write(chunk as string);
    parser.close();
  }

  private open(): Readable {
    const file = createReadStream(this.file);
    if (!this.gzip) return file.setEncoding("utf8");
    const gunzip = createGunzip();
    file.on("error", (err) => gunzip.destroy(err));
    return file.pipe(gunzip).setEncoding("utf8");
  }
}
