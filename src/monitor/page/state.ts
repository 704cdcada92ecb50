import type { PsdView, SpectrumChannel, SpectrumView } from '../../router/view.js';
import type { BandGrid } from '../band.js';
import type { HelloMessage, OnWire, StateMessage } from '../protocol.js';

/** The band-wide PSD when a round ended, stitched from the latest PSD of each channel (band.ts). */
export interface BandRow {
  grid: BandGrid;
  /** dBm/Hz on `grid`, NaN where no PSD reaches. */
  dbmPerHz: Float32Array;
}

/** One sensing round as a waterfall row: its cells by channel, where R1 was, and the band's PSD. */
export interface Row {
  round: number;
  startUs: number;
  endUs: number;
  cells: Map<number, SpectrumChannel>;
  r1: number | null;
  band: BandRow | null;
}

/** Everything the page knows of the router, from the stream. */
export interface PageState {
  hello: OnWire<HelloMessage> | null;
  /** The waterfalls' columns. */
  channels: number[];
  rows: Row[];
  latest: SpectrumView | null;
  /** The latest PSD of each channel. */
  psds: Map<number, PsdView>;
  /** Each channel's centre frequency, Hz, from the spectrum frames. */
  centersHz: Map<number, number>;
  psdFrames: number;
  state: OnWire<StateMessage> | null;
  r1: number | null;
  r2: number | null;
  r3: number | null;
  r1Reason: string | null;
  /** The events list, newest first, as HTML. */
  events: string[];
  frames: number;
  badFrames: number;
  configVersion: string | null;
}

export function emptyState(): PageState {
  return {
    hello: null,
    channels: [],
    rows: [],
    latest: null,
    psds: new Map(),
    centersHz: new Map(),
    psdFrames: 0,
    state: null,
    r1: null,
    r2: null,
    r3: null,
    r1Reason: null,
    events: [],
    frames: 0,
    badFrames: 0,
    configVersion: null,
  };
}

/** The element with this id (the page's markup has every id the script uses). */
export function $<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the monitor page has no #${id}`);
  return el as T;
}

/** A table's rows, and its "empty" note (`#<id>-empty`) when there are none. */
export function setRows(id: string, html: string[]): void {
  $<HTMLTableElement>(id).tBodies[0]!.innerHTML = html.join('');
  $(`${id}-empty`).hidden = html.length > 0;
}
