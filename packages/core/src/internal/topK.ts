/**
 * The `k` first items of `items` in `compare` order (negative: `a` comes first), in that order:
 * a bounded binary heap whose root is the worst item kept, so `n` items cost `n log k`
 * comparisons rather than the `n log n` of sorting them all.
 */
export const select = <A>(items: Iterable<A>, k: number, compare: (a: A, b: A) => number): Array<A> => {
  const heap: Array<A> = []
  if (k <= 0) return heap
  // `after(i, j)`: heap[i] comes after heap[j], so it sits nearer the root.
  const after = (i: number, j: number) => compare(heap[i]!, heap[j]!) > 0
  const swap = (i: number, j: number) => {
    const t = heap[i]!
    heap[i] = heap[j]!
    heap[j] = t
  }
  const siftDown = (start: number) => {
    let i = start
    for (;;) {
      const left = 2 * i + 1
      const right = left + 1
      let worst = i
      if (left < heap.length && after(left, worst)) worst = left
      if (right < heap.length && after(right, worst)) worst = right
      if (worst === i) return
      swap(i, worst)
      i = worst
    }
  }
  for (const item of items) {
    if (heap.length < k) {
      heap.push(item)
      for (let i = heap.length - 1; i > 0;) {
        const parent = (i - 1) >> 1
        if (!after(i, parent)) break
        swap(i, parent)
        i = parent
      }
    } else if (compare(item, heap[0]!) < 0) {
      heap[0] = item
      siftDown(0)
    }
  }
  return heap.sort(compare)
}
