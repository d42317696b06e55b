// Runs s3rver in its own process (started with --openssl-legacy-provider, which its paged
// listing needs on Node 17+) and reports the port it listens on to the parent over IPC.
// argv: <data directory> [port]. Stops on SIGTERM or when the parent goes away.
const S3rver = require('s3rver');

const [directory, wantedPort] = process.argv.slice(2);
const server = new S3rver({
  address: '127.0.0.1',
  port: Number(wantedPort ?? 0),
  directory,
  silent: true,
  allowMismatchedSignatures: true,
});

server.run().then(
  (address) => process.send?.({ port: address.port }),
  (error) => {
    process.send?.({ error: String(error) });
    process.exit(1);
  },
);

const stop = () => server.close().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('disconnect', stop);
