/** A datastore driver that records every statement sent through it, in and out of transactions. */
import type { Driver } from "../../drivers/types.ts";

export function counting(db: Driver): { driver: Driver; statements: string[] } {
  const statements: string[] = [];
  const driver: Driver = {
    kind: db.kind,
    query: (sql, params, options) => (statements.push(sql), db.query(sql, params, options)),
    transaction: (work) => db.transaction((tx) => work({ query: (sql, params) => (statements.push(sql), tx.query(sql, params)) })),
    close: () => db.close(),
  };
  return { driver, statements };
}
