import { findProbe } from "../src/probes/index.ts";
for (const n of ["pg_stat_database", "pg_stat_statements", "pg_stat_all_tables"]) console.log(n, findProbe(n)!.columns.length);
