// A piscina worker for OrderedPool's tests: each task notes, in memory shared with the test, that it started
// and in which place, so the test can watch starts while its own thread is blocked.
export default function start({ started, order, id }) {
  const place = Atomics.add(started, 0, 1);
  order[place] = id;
  Atomics.notify(started, 0);
  return place;
}
