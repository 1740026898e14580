package demo.cpu;

import demo.util.Harness;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * usage: SleepSpin MS. caller() calls sleepFor() (Thread.sleep MS: elapsed MS, on-CPU ~0)
 * and spinFor() (busy MS: elapsed and on-CPU MS). DONE cpu_ns: the thread's CPU time around
 * caller() as the JVM measures it (CLOCK_THREAD_CPUTIME_ID); sleep_ns, spin_ns, caller_ns: the
 * elapsed time around each call (System.nanoTime), whose window holds the probes' frame of it.
 */
public final class SleepSpin {
    static long ms;
    static long sleepNs, spinNs;

    static void sleepFor() throws InterruptedException {
        Thread.sleep(ms);
    }

    static void spinFor() {
        long end = System.nanoTime() + ms * 1_000_000L; while (System.nanoTime() < end) { }
    }

    static void caller() throws InterruptedException {
        long t0 = System.nanoTime();
        sleepFor();
        long t1 = System.nanoTime();
        spinFor();
        long t2 = System.nanoTime();
        sleepNs = t1 - t0;
        spinNs = t2 - t1;
    }

    public static void main(String[] args) throws Exception {
        ms = Long.parseLong(args[0]);
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Harness.awaitGo();
        long cpu0 = threads.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        caller();
        long t1 = System.nanoTime();
        long cpu1 = threads.getCurrentThreadCpuTime();
        Harness.done("cpu_ns=" + (cpu1 - cpu0) + " sleep_ns=" + sleepNs + " spin_ns=" + spinNs
                + " caller_ns=" + (t1 - t0));
    }
}
