// Runs s3rver in its own process (started with --openssl-legacy-provider, which its paged
// listing needs on Node 17+) and reports the port it listens on to the parent over IPC.
// argv: <data directory> [port]. Stops on SIGTERM or when the parent goes away.
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { Readable, Transform } = require('node:stream');
const { pipeline } = require('node:stream/promises');
const S3rver = require('s3rver');
const FilesystemStore = require('s3rver/lib/stores/filesystem');
const S3Object = require('s3rver/lib/models/object');

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

// s3rver 3.7.1 answers a PUT before the object's bytes are on disk: its putObject resolves
// when the body has been handed to the file stream (for a streamed body, when the hashing
// transform finished), not when the file was written, and it writes the file in place. A
// GET right after the acknowledged PUT could then read a short or empty object — a torn
// read no S3 ever shows, which the store rightly reports as corrupt. Here a PUT is
// acknowledged only once the object is stored: the bytes go to a temporary file that is
// renamed over the key's file after it was written and closed (and after the metadata and
// MD5 files it is read with), so a reader sees the old object or the new one, entirely.
let temporaries = 0;
const temporaryOf = (file) => `${file}.${process.pid}.${++temporaries}.tmp`;

async function writeFileWhole(file, data) {
  const temp = temporaryOf(file);
  await fs.promises.writeFile(temp, data);
  await fs.promises.rename(temp, file);
}

FilesystemStore.prototype.putMetadata = async function putMetadata(bucket, key, metadata, md5) {
  const json = {};
  for (const [name, value] of Object.entries(metadata ?? {})) {
    if (S3Object.ALLOWED_METADATA.includes(name) || name.startsWith('x-amz-meta-')) {
      json[name] = value;
    }
  }
  if (md5) await writeFileWhole(this.getResourcePath(bucket, key, 'object.md5'), md5);
  await writeFileWhole(
    this.getResourcePath(bucket, key, 'metadata.json'),
    JSON.stringify(json, null, 2),
  );
};

FilesystemStore.prototype.putObject = async function putObject(object) {
  const objectPath = this.getResourcePath(object.bucket, object.key, 'object');
  await fs.promises.mkdir(path.dirname(objectPath), { recursive: true });
  const temp = temporaryOf(objectPath);
  const md5 = crypto.createHash('md5');
  let size = 0;
  const hashing = new Transform({
    transform(chunk, encoding, callback) {
      md5.update(chunk, encoding);
      size += chunk.length;
      callback(null, chunk);
    },
  });
  const body = Buffer.isBuffer(object.content) ? Readable.from([object.content]) : object.content;
  try {
    // pipeline() settles once the file stream has finished writing and closed the file.
    await pipeline(body, hashing, fs.createWriteStream(temp));
    const digest = md5.digest('hex');
    await this.putMetadata(object.bucket, object.key, object.metadata, digest);
    await fs.promises.rename(temp, objectPath);
    return { size, md5: digest };
  } catch (err) {
    await fs.promises.unlink(temp).catch(() => {});
    throw err;
  }
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
