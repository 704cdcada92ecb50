/**
 * What the overall help (`cogmesh --help`) says of each subcommand: the term
 * after its name (`[options]` when it has options, then its arguments, as
 * commander writes them) and its description. Here rather than only in the
 * subcommand's module so that the overall help, `--version` and a refused
 * command line list every subcommand without loading any: loading them all
 * (ZeroMQ, WebSockets, the simulator, the daemon) is most of what such a run
 * would cost. Each module takes its description from here, and a test checks
 * the terms against the commands that the modules define.
 */
export const LISTED = {
  node: {
    term: '[options]',
    about: 'run one mesh router: sense the band, pick the R1 channel, log every round and decision',
  },
  sense: {
    term: '[options]',
    about: 'sense the emulated band (or a SigMF recording, or a UHD radio) and print w and RC per channel and the R1 choice',
  },
  phy: {
    term: '',
    about: 'the 802.11b DSSS PHY: write frames into a SigMF recording (tx), find the frames in one (decode), send them through a radio (send)',
  },
  record: {
    term: '[options]',
    about: 'record the emulated band into a SigMF recording (NAME.sigmf-meta + NAME.sigmf-data), sweeping channels in virtual time',
  },
  sim: {
    term: '[options] <scenario>',
    about: 'run a whole mesh in virtual time from a scenario file (deterministic for a seed)',
  },
  config: {
    term: '',
    about: 'check, show and explain node configurations',
  },
  scenario: {
    term: '',
    about: 'check simulator scenario files',
  },
  devices: {
    term: '[options]',
    about: 'list the radios this machine offers: USRPs through UHD, known USB SDRs, SORA-like rings',
  },
  ctl: {
    term: '[options]',
    about: 'talk to a running router over its ZeroMQ control API (docs/control-api.md); a refused command exits 1, a usage error 2',
  },
  keygen: {
    term: '[options]',
    about:
      'make a CURVE key pair for the control API or the medium link: {"publicKey","secretKey"} (Z85); or, with --token, a monitor token; or, with --r3-key, a key file for R3 authentication',
  },
  band: {
    term: '[options]',
    about: "run the band hub: the emulated bands of node processes on this machine (sim.band.hub) share their radios' IQ bursts through it",
  },
  medium: {
    term: '[options]',
    about:
      "run the emulated air medium that routers' sim radios join over a stream socket (tcp or ipc): the scenario's channels, PNs, MAC and PHY, in real time",
  },
  testbed: {
    term: '[options] <scenario>',
    about:
      'run a scenario in real time: the air medium and one `cogmesh node` process per router, each with its control API and monitor; Ctrl-C stops them all',
  },
  controller: {
    term: '[options]',
    about:
      'run the CETT controller: routers in openflow active mode connect to it (--listen), it connects to passive ones (--connect), over TCP or TLS; each --flow goes along its minimum-CETT path, with TCP-ACC VNFs on its relays when asked',
  },
  gateway: {
    term: '',
    about:
      "ADWISER v2 at a mesh gateway: the clients' dependence graph (same AP, Type II, Type III from scan reports) and the time slices that maximise the sum of log shares (plan); the rate adaptation over a recorded queue (rate); a client's scan report to its gateway over UDP (scan-report)",
  },
} as const satisfies Readonly<Record<string, { readonly term: string; readonly about: string }>>;

/** A subcommand's name. */
export type SubcommandName = keyof typeof LISTED;
