package demo.abc;

import demo.util.Harness;

/**
 * FixedWork's call flow (a() calls b() twice and c() once, b() calls c() twice: 8 calls, 16 probe
 * events per a()) timed by the JVM in batches, for tests/bench/trap_windows.sh. It scales the unit
 * so that one c() takes C_US microseconds, times batches of BATCH calls of a() for SECONDS / 3
 * untraced, prints READY, waits for a line, times batches for SECONDS more, then prints each batch
 * as "batch PHASE START_NS END_NS" (System.nanoTime, the kernel's CLOCK_MONOTONIC; phase 0
 * untraced, 1 after the line) and DONE. Nothing is formatted while batches run: every JDK call
 * there would be a probe event.
 * usage: Batches C_US SECONDS BATCH
 */
public final class Batches {
    private Batches() {}

    // Times batch calls of a() into start[n], end[n].
    static void timeBatch(long[] start, long[] end, int n, int batch) {
        start[n] = System.nanoTime();
        for (int i = 0; i < batch; i++) {
            FixedWork.a();
        }
        end[n] = System.nanoTime();
    }

    public static void main(String[] args) throws Exception {
        double cTargetNs = Double.parseDouble(args[0]) * 1000;
        int seconds = Integer.parseInt(args[1]);
        int batch = Integer.parseInt(args[2]);
        FixedWork.warmAndScale(cTargetNs);
        // a() holds 13.5 c() of work: enough room for the traced phase's slower batches.
        int perPhase = (int) (seconds * 1e9 / (13.5 * cTargetNs) / batch) + 1;
        long[] start = new long[perPhase * 2], end = new long[perPhase * 2];
        int n = 0;
        for (; n < perPhase / 3; n++) {
            timeBatch(start, end, n, batch);
        }
        int untraced = n;
        Harness.awaitGo();
        long until = System.nanoTime() + seconds * 1_000_000_000L;
        for (; System.nanoTime() < until && n < start.length; n++) {
            timeBatch(start, end, n, batch);
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < n; i++) {
            out.append("batch ").append(i < untraced ? 0 : 1).append(' ').append(start[i]).append(' ')
                    .append(end[i]).append('\n');
        }
        System.out.print(out);
        Harness.done("batches=".concat(Integer.toString(n)));
    }
}
