// Entry of a sweep's worker thread. Worker threads do not inherit the main thread's module hooks,
// so each one registers tsx itself (as bin/fxflow.js does), then loads the TypeScript worker.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
