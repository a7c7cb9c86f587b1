// @octokit/webhooks-methods is published as ES modules only (its exports have no "require"
// condition); the tests are CommonJS, which can require() this ES module that imports it.
export { sign, verify } from '@octokit/webhooks-methods';
