// A piscina worker for OrderedPool's tests: each task notes, in memory shared with the test, that it started
// and in which place, so the test can watch starts while its own thread is blocked. A task given `hold` keeps
// its thread until the test sets hold[0] (or 30 s pass).
export default function start({ started, order, id, hold }) {
  const place = Atomics.add(started, 0, 1);
  order[place] = id;
  Atomics.notify(started, 0);
  if (hold) Atomics.wait(hold, 0, 0, 30_000);
  return place;
}
