declare module 'js-yaml' {
  /** Parses one YAML document (js-yaml 4: the safe schema by default). */
  export function load(text: string): unknown;
}
