import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { DeliveryAnswer, DeliveryData, DeliveryRequest } from './delivery-worker';

/**
 * The main thread's side of the push delivery worker (src/parts/push/delivery-worker.ts): one
 * worker thread, started at the first push and kept (unref'd: it never holds the process open);
 * requests made in the same turn go to it as one message. A worker that dies fails what it held
 * and is started again at the next push.
 */
const WORKER_FILE = path.join(__dirname, `delivery-worker${path.extname(__filename)}`);

export type Delivered = Omit<DeliveryAnswer, 'id'>;

export interface Deliverer {
  deliver(request: Omit<DeliveryRequest, 'id'>): Promise<Delivered>;
  close(): void;
}

export function createDeliverer(data: DeliveryData): Deliverer {
  let worker: Worker | null = null;
  let lastId = 0;
  const waiting = new Map<number, { resolve(answer: Delivered): void; reject(err: Error): void }>();
  let batch: DeliveryRequest[] = [];

  function started(): Worker {
    if (worker) return worker;
    const thread = new Worker(WORKER_FILE, { workerData: data });
    thread.unref();
    thread.on('message', ({ id, ...answer }: DeliveryAnswer) => {
      const wait = waiting.get(id);
      waiting.delete(id);
      wait?.resolve(answer);
    });
    const ended = (err: Error) => {
      if (worker !== thread) return;
      worker = null;
      for (const wait of waiting.values()) wait.reject(err);
      waiting.clear();
    };
    thread.on('error', ended);
    thread.on('exit', (code) => ended(new Error(`the push worker stopped (${code})`)));
    worker = thread;
    return thread;
  }

  function flush(): void {
    const requests = batch;
    batch = [];
    if (requests.length > 0) started().postMessage(requests);
  }

  return {
    deliver(request) {
      return new Promise((resolve, reject) => {
        const id = ++lastId;
        waiting.set(id, { resolve, reject });
        if (batch.length === 0) queueMicrotask(flush);
        batch.push({ id, ...request });
      });
    },
    close() {
      const thread = worker;
      worker = null;
      batch = [];
      for (const wait of waiting.values()) wait.reject(new Error('the push sender is closed'));
      waiting.clear();
      void thread?.terminate();
    },
  };
}
