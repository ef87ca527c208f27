/** The shape of a locale namespace with every leaf widened to string, for the other languages. */
export type Dict<T> = { [K in keyof T]: T[K] extends string ? string : Dict<T[K]> };
