/** The injection token of the open database (OpenDatabase: engine, url, data source). */
export const OPEN_DATABASE = 'OPEN_DATABASE';
