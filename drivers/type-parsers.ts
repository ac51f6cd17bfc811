/** Type OIDs whose text form every driver parses the same way (see the contract in types.ts). */
export const INT8_OID = 20;
export const NUMERIC_OID = 1700;

export const parseNumber = (text: string): number => Number(text);
