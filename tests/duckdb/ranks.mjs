// The cross-rank recipe of docs/queries.md ("Hundreds of ranks: DuckDB"), run by DuckDB over the
// CSV tables `vramtrace export --csv DIR` writes. Prints one JSON object with both results.
//   node ranks.mjs DIR MODULE   (MODULE: path of @duckdb/node-api's lib/index.js)
import { createRequire } from "node:module";

const [dir, modulePath] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const { DuckDBInstance } = require(modulePath);

const db = await DuckDBInstance.create(":memory:");
const con = await db.connect();
const csv = (t) => `read_csv_auto('${dir}/${t}.csv', header = true)`;

// 1. Kernel work per rank, and how far the slowest rank is from the median.
const work = await con.runAndReadAll(`
  SELECT rank, count(*) AS kernels, sum("end" - start) AS kernel_ns
  FROM ${csv("kernel")} GROUP BY rank ORDER BY rank`);
// 2. Peak live device memory per rank (allocations op 1, frees op 2, device memory kind 3), and
//    the ranks whose peak is furthest above the lowest one.
const peak = await con.runAndReadAll(`
  WITH live AS (
    SELECT rank, sum(CASE op WHEN 1 THEN bytes WHEN 2 THEN -bytes ELSE 0 END)
             OVER (PARTITION BY rank, device ORDER BY ts, id) AS live_bytes
    FROM ${csv("memory_event")} WHERE mem_kind = 3)
  SELECT rank, max(live_bytes) AS peak_bytes,
         max(live_bytes) - min(max(live_bytes)) OVER () AS above_lowest
  FROM live GROUP BY rank ORDER BY above_lowest DESC, rank LIMIT 5`);
const rows = (r) => r.getRowObjectsJson();
console.log(JSON.stringify({ work: rows(work), peak: rows(peak) }));
