import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
for (const ext of [false, true, false, true]) {
  const t = Date.now();
  const db = await PGlite.create(ext ? { extensions: { vector } } : {});
  await db.query("select 1");
  console.log(ext ? "with vector" : "plain", Date.now() - t);
  await db.close();
}
