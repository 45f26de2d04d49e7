// Preload: node -r tests/interop/loopback.cjs SCRIPT ...   (or NODE_OPTIONS="--require <abs path>/loopback.cjs")
// Forces every TCP listen() that names a port onto 127.0.0.1. Node binds a listen(port, host) only after an
// async dns.lookup, which breaks code that reads server.address().port right after listen(0) (the conformance
// harness's mock servers do), so the lookup of the literal 127.0.0.1 is answered synchronously.
const net = require('net');
const dns = require('dns');
const LOOP = '127.0.0.1';
const origLookup = dns.lookup;
dns.lookup = function (hostname, options, cb) {
  if (typeof options === 'function') { cb = options; options = {}; }
  if (hostname === LOOP && typeof cb === 'function') {
    return (options && typeof options === 'object' && options.all) ? cb(null, [{ address: LOOP, family: 4 }]) : cb(null, LOOP, 4);
  }
  return origLookup.call(this, hostname, options, cb);
};
const origListen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const a0 = args[0];
  if (a0 && typeof a0 === 'object' && !Array.isArray(a0) && ('port' in a0) && !('path' in a0)) {
    args[0] = { ...a0, host: LOOP };
  } else if (typeof a0 === 'number' || (typeof a0 === 'string' && /^\d+$/.test(a0))) {
    if (typeof args[1] === 'string') args[1] = LOOP; else args.splice(1, 0, LOOP);
  }
  return origListen.apply(this, args);
};
