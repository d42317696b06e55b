// Runs s3rver in its own process (started with --openssl-legacy-provider, which its paged
// listing needs on Node 17+) and reports the port it listens on to the parent over IPC.
// argv: <data directory> [port]. Stops on SIGTERM or when the parent goes away.
const fs = require('node:fs');
const S3rver = require('s3rver');
const FilesystemStore = require('s3rver/lib/stores/filesystem');

// s3rver 3.7.1 removes a key's parent folders once they are empty after a DELETE, while a
// PUT of a sibling key may have just created them (mkdirp, then open): that PUT's file
// stream then fails with ENOENT, an 'error' s3rver does not handle, and the server dies
// (every later request gets a 503 from the proxy). Deletes here keep the folders; the
// objects and their listing are the same.
FilesystemStore.prototype.deleteObject = async function deleteObject(bucket, key) {
  await Promise.all(
    ['object', 'object.md5', 'metadata.json'].map((kind) =>
      fs.promises.unlink(this.getResourcePath(bucket, key, kind)).catch((err) => {
        if (err.code !== 'ENOENT') throw err;
      }),
    ),
  );
};

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
