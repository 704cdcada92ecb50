/** The parser's shape (the package ships no types): one family per metric name, prom2json-like. */
declare module 'parse-prometheus-text-format' {
  export interface PromSample {
    value: string;
    labels?: Record<string, string>;
  }
  export interface PromFamily {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: PromSample[];
  }
  export default function parsePrometheusTextFormat(text: string): PromFamily[];
}
