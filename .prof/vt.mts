import { openPglite } from "../drivers/pglite.ts";
const t = Date.now();
const db = await openPglite();
console.log("open ms", Date.now() - t);
await db.query("CREATE EXTENSION IF NOT EXISTS vector");
await db.query("CREATE TABLE m (id int, e vector)");
await db.query("INSERT INTO m VALUES (1, '[1,2,3]'), (2, '[3,2,1]'), (3, '[1,2]')");
console.log(await db.query("SELECT id, e <=> '[1,2,3]' AS d FROM m WHERE vector_dims(e) = 3 ORDER BY d"));
await db.close();
