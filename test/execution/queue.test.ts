import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { ExecutionQueue } from '../../src/execution/queue.js';

/** A promise the test opens by hand. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/** Fails instead of hanging when `p` does not settle (a generous "did not hang" bound). */
async function within<T>(p: Promise<T>, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('ExecutionQueue', () => {
  test('50 offers at limit 4 / queue 10: 14 accepted, 36 refused, max concurrency 4, FIFO kept', async () => {
    const queue = new ExecutionQueue(4, 10);
    const started: string[] = [];
    const finished: string[] = [];
    let running = 0;
    let maxRunning = 0;

    const accepted: string[] = [];
    let refused = 0;
    for (let i = 0; i < 50; i++) {
      const id = `t${i}`;
      const ok = queue.tryRun(id, async () => {
        started.push(id);
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        await sleep(2 + (i % 3)); // uneven durations shuffle the finishing order
        running -= 1;
        finished.push(id);
      });
      if (ok) accepted.push(id);
      else refused += 1;
    }

    assert.equal(accepted.length, 14);
    assert.equal(refused, 36);
    assert.deepEqual(accepted, Array.from({ length: 14 }, (_, i) => `t${i}`));
    assert.equal(queue.running, 4);
    assert.equal(queue.waiting, 10);
    assert.equal(queue.isWaiting('t4'), true);
    assert.equal(queue.isWaiting('t14'), false, 'a refused offer leaves no trace');

    await within(queue.idle());
    assert.equal(finished.length, 14);
    assert.deepEqual(started, accepted, 'tasks start in the order they were offered');
    assert.equal(maxRunning, 4);
    assert.equal(queue.running, 0);
    assert.equal(queue.waiting, 0);
  });

  test('a task starts synchronously when a slot is free', () => {
    const queue = new ExecutionQueue(1, 0);
    let ran = false;
    assert.equal(
      queue.tryRun('a', async () => {
        ran = true;
      }),
      true,
    );
    assert.equal(ran, true);
  });

  test('with no queue room an offer is refused as soon as the slots are full', async () => {
    const queue = new ExecutionQueue(2, 0);
    const g = gate();
    assert.equal(queue.tryRun('a', () => g.wait), true);
    assert.equal(queue.tryRun('b', () => g.wait), true);
    assert.equal(queue.tryRun('c', () => g.wait), false);
    g.open();
    await within(queue.idle());
    assert.equal(queue.tryRun('c', async () => {}), true, 'freed slots accept work again');
    await within(queue.idle());
  });

  test('hasRoom() tells whether an offer made now would be accepted', async () => {
    const queue = new ExecutionQueue(1, 1);
    const g = gate();
    assert.equal(queue.hasRoom(), true);
    queue.tryRun('a', () => g.wait);
    assert.equal(queue.hasRoom(), true, 'the queue still has room');
    queue.tryRun('b', () => g.wait);
    assert.equal(queue.hasRoom(), false);
    assert.equal(queue.tryRun('c', () => g.wait), false);
    g.open();
    await within(queue.idle());
    assert.equal(queue.hasRoom(), true);
  });

  test('a forced offer queues past maxQueued but still respects the running limit', async () => {
    const queue = new ExecutionQueue(1, 0);
    const g = gate();
    const order: string[] = [];
    let running = 0;
    let maxSeen = 0;
    const task = (id: string) => async () => {
      running += 1;
      maxSeen = Math.max(maxSeen, running);
      order.push(id);
      await g.wait;
      running -= 1;
    };
    assert.equal(queue.tryRun('a', task('a')), true);
    assert.equal(queue.tryRun('b', task('b')), false);
    assert.equal(queue.tryRun('approved', task('approved'), true), true);
    assert.equal(queue.waiting, 1);
    assert.equal(queue.isWaiting('approved'), true);
    g.open();
    await within(queue.idle());
    assert.deepEqual(order, ['a', 'approved']);
    assert.equal(maxSeen, 1);
  });

  test('a cancelled waiting task never runs, and only waiting tasks can be cancelled', async () => {
    const queue = new ExecutionQueue(1, 2);
    const g = gate();
    const ran: string[] = [];
    queue.tryRun('blocker', async () => {
      await g.wait;
      ran.push('blocker');
    });
    queue.tryRun('b', async () => {
      ran.push('b');
    });
    queue.tryRun('c', async () => {
      ran.push('c');
    });

    assert.equal(queue.cancel('b'), true);
    assert.equal(queue.isWaiting('b'), false);
    assert.equal(queue.waiting, 1);
    assert.equal(queue.cancel('b'), false, 'already gone');
    assert.equal(queue.cancel('blocker'), false, 'a running task is not the queue’s to cancel');
    assert.equal(queue.cancel('unknown'), false);
    assert.equal(queue.isRunning('blocker'), true);

    g.open();
    await within(queue.idle());
    assert.deepEqual(ran, ['blocker', 'c']);
  });

  test('a task that rejects or throws still frees its slot and is reported', async () => {
    const errors: Array<[string, unknown]> = [];
    const queue = new ExecutionQueue(1, 2, (id, err) => errors.push([id, err]));
    const ran: string[] = [];
    queue.tryRun('rejects', async () => {
      await sleep(1);
      throw new Error('async failure');
    });
    queue.tryRun('throws', () => {
      throw new Error('sync failure');
    });
    queue.tryRun('after', async () => {
      ran.push('after');
    });

    await within(queue.idle());
    assert.deepEqual(ran, ['after']);
    assert.deepEqual(
      errors.map(([id, err]) => [id, (err as Error).message]),
      [
        ['rejects', 'async failure'],
        ['throws', 'sync failure'],
      ],
    );
    assert.equal(queue.running, 0);
  });

  test('a throwing error callback does not leak the slot', async () => {
    const queue = new ExecutionQueue(1, 0, () => {
      throw new Error('logger broke');
    });
    queue.tryRun('a', async () => {
      throw new Error('task failed');
    });
    await within(queue.idle());
    assert.equal(queue.running, 0);
  });

  test('idle() resolves at once when empty and otherwise only after the last task ends', async () => {
    const queue = new ExecutionQueue(1, 1);
    await within(queue.idle());

    const g = gate();
    let done = 0;
    queue.tryRun('a', async () => {
      await g.wait;
      done += 1;
    });
    queue.tryRun('b', async () => {
      done += 1;
    });
    let idle = false;
    const waiting = queue.idle().then(() => {
      idle = true;
    });
    await new Promise((resolve) => setImmediate(resolve)); // let every pending callback run
    assert.equal(idle, false, 'still busy');
    g.open();
    await within(waiting);
    assert.equal(done, 2);
  });

  test('clearWaiting() empties the queue in FIFO order and those tasks never run', async () => {
    const queue = new ExecutionQueue(1, 3);
    const g = gate();
    const ran: string[] = [];
    queue.tryRun('running', () => g.wait);
    for (const id of ['x', 'y', 'z']) {
      queue.tryRun(id, async () => {
        ran.push(id);
      });
    }
    assert.deepEqual(queue.clearWaiting(), ['x', 'y', 'z']);
    assert.equal(queue.waiting, 0);
    g.open();
    await within(queue.idle());
    assert.deepEqual(ran, []);
  });

  test('retryAfterSeconds() is a whole number of seconds, at least 1', async () => {
    const queue = new ExecutionQueue(2, 0);
    assert.equal(queue.retryAfterSeconds(), 1);
    queue.tryRun('a', async () => {});
    await within(queue.idle());
    const hint = queue.retryAfterSeconds();
    assert.ok(Number.isInteger(hint) && hint >= 1 && hint <= 60, `got ${hint}`);
  });

  test('an id already running or waiting cannot be offered again', () => {
    const queue = new ExecutionQueue(1, 1);
    const g = gate();
    queue.tryRun('a', () => g.wait);
    queue.tryRun('b', () => g.wait);
    assert.throws(() => queue.tryRun('a', async () => {}), /already in the queue/);
    assert.throws(() => queue.tryRun('b', async () => {}), /already in the queue/);
    g.open();
  });

  test('limits must be sensible integers', () => {
    assert.throws(() => new ExecutionQueue(0, 1), RangeError);
    assert.throws(() => new ExecutionQueue(1.5, 1), RangeError);
    assert.throws(() => new ExecutionQueue(1, -1), RangeError);
    assert.doesNotThrow(() => new ExecutionQueue(1, 0));
  });
});
