package dev.stagger.rabbitmq.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import org.junit.jupiter.api.Test;

class AcknowledgerTest {
    /**
     * The consume channel as the broker keeps it: the deliveries not yet settled. A frame naming a
     * delivery it does not hold is the broker's "unknown delivery tag", which closes the channel.
     */
    private static final class Broker implements Acknowledger.Frames {
        final TreeSet<Long> unsettled = new TreeSet<>();
        final Set<Long> acked = new HashSet<>();
        final Set<Long> givenBack = new HashSet<>();
        final List<String> frames = new ArrayList<>();
        /** Runs on the sending thread during each frame, as other threads would hand in settlements meanwhile. */
        LongConsumer duringFrame = tag -> { };

        Broker(long deliveries) {
            for (long t = 1; t <= deliveries; t++) {
                unsettled.add(t);
            }
        }

        @Override
        public void ack(long tag, boolean multiple) {
            frames.add((multiple ? "ack<=" : "ack ") + tag);
            assertThat(unsettled).as("unknown delivery tag %d", tag).contains(tag);
            if (multiple) {
                List<Long> taken = new ArrayList<>(unsettled.headSet(tag, true));
                acked.addAll(taken);
                unsettled.removeAll(taken);
            } else {
                acked.add(tag);
                unsettled.remove(tag);
            }
            duringFrame.accept(tag);
        }

        @Override
        public void giveBack(long tag) {
            frames.add("back " + tag);
            assertThat(unsettled).as("unknown delivery tag %d", tag).contains(tag);
            givenBack.add(tag);
            unsettled.remove(tag);
            duringFrame.accept(tag);
        }
    }

    @Test
    void acknowledgementsHandedInWhileAFrameIsWrittenGoOutAsOneMultipleAcknowledgement() {
        Broker broker = new Broker(6);
        Acknowledger acks = new Acknowledger(broker);
        broker.duringFrame = tag -> {
            if (tag == 1) {
                for (long t = 2; t <= 6; t++) {
                    acks.ack(t); // another thread's handlers finishing while the first frame is written
                }
            }
        };

        acks.ack(1);

        assertThat(broker.frames).containsExactly("ack<=1", "ack<=6");
        assertThat(broker.unsettled).isEmpty();
    }

    @Test
    void anAcknowledgementAboveADeliveryStillUnsettledGoesAloneAndAtOnce() {
        Broker broker = new Broker(3);
        Acknowledger acks = new Acknowledger(broker);

        acks.ack(2); // delivery 1 is still in its handler, or its copy is not yet confirmed
        acks.ack(3);

        assertThat(broker.frames).containsExactly("ack 2", "ack 3");
        assertThat(broker.unsettled).containsExactly(1L);

        acks.ack(1);
        assertThat(broker.frames).containsExactly("ack 2", "ack 3", "ack<=1");
        assertThat(broker.unsettled).isEmpty();
    }

    @Test
    void aGiveBackIsWrittenBeforeAnyMultipleAcknowledgementThatCoversItsTag() {
        Broker broker = new Broker(4);
        Acknowledger acks = new Acknowledger(broker);
        broker.duringFrame = tag -> {
            if (tag == 1) {
                acks.ack(4);
                acks.giveBack(2);
                acks.ack(3);
            }
        };

        acks.ack(1);

        assertThat(broker.frames).containsExactly("ack<=1", "back 2", "ack<=4");
        assertThat(broker.givenBack).containsExactly(2L);
        assertThat(broker.acked).containsExactlyInAnyOrder(1L, 3L, 4L);
    }

    @Test
    void aSecondSettlementOfTheSameDeliveryWritesNothing() {
        Broker broker = new Broker(2);
        Acknowledger acks = new Acknowledger(broker);

        acks.ack(2);
        acks.ack(2);
        acks.ack(1);
        acks.giveBack(1);

        assertThat(broker.frames).containsExactly("ack 2", "ack<=1");
    }

    /**
     * Settlements handed in in random orders, in random bunches (as many threads would), with some
     * deliveries never settled: no frame names a delivery the broker does not hold, no delivery is
     * acknowledged that was not handed in as acknowledged (a given-back or unsettled one taken by
     * a multiple acknowledgement would be a message lost), and everything handed in is written.
     */
    @Test
    void noFrameEverSettlesADeliveryThatWasNotHandedInSoOverManyRandomOrders() {
        for (long seed = 0; seed < 500; seed++) {
            Random random = new Random(seed);
            int n = 1 + random.nextInt(60);
            Broker broker = new Broker(n);
            Acknowledger acks = new Acknowledger(broker);
            List<Long> order = new ArrayList<>();
            for (long t = 1; t <= n; t++) {
                order.add(t);
            }
            Collections.shuffle(order, random);
            Set<Long> toAck = new HashSet<>();
            Set<Long> toGiveBack = new HashSet<>();
            List<Long> handed = new ArrayList<>();
            for (long t : order) {
                int what = random.nextInt(10);
                if (what == 0) {
                    continue; // never settled: its handler still runs, or its copy waits for a confirm
                }
                (what == 1 ? toGiveBack : toAck).add(t);
                handed.add(t);
            }
            // hand in each next settlement either from the test's thread or during a frame being written
            int[] next = {0};
            Runnable handNext = () -> {
                long t = handed.get(next[0]++);
                if (toGiveBack.contains(t)) {
                    acks.giveBack(t);
                } else {
                    acks.ack(t);
                }
            };
            broker.duringFrame = tag -> {
                int bunch = random.nextInt(4);
                for (int i = 0; i < bunch && next[0] < handed.size(); i++) {
                    handNext.run();
                }
            };
            while (next[0] < handed.size()) {
                handNext.run();
            }

            assertThat(broker.acked).as("seed %d", seed).isEqualTo(toAck);
            assertThat(broker.givenBack).as("seed %d", seed).isEqualTo(toGiveBack);
            Set<Long> neverSettled = new TreeSet<>(order);
            neverSettled.removeAll(handed);
            assertThat(broker.unsettled).as("seed %d", seed).isEqualTo(neverSettled);
        }
    }

    @Test
    void awaitWrittenWaitsForTheFramesAnotherThreadIsStillWriting() throws Exception {
        Broker broker = new Broker(2);
        CountDownLatch writing = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Acknowledger acks = new Acknowledger(new Acknowledger.Frames() {
            @Override
            public void ack(long tag, boolean multiple) {
                writing.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                broker.ack(tag, multiple);
            }

            @Override
            public void giveBack(long tag) {
                broker.giveBack(tag);
            }
        });
        Thread sender = new Thread(() -> acks.ack(1));
        sender.start();
        assertThat(writing.await(30, TimeUnit.SECONDS)).isTrue();
        acks.ack(2); // handed to the sender, which is still writing

        assertThat(acks.awaitWritten(0)).isFalse();
        release.countDown();
        assertThat(acks.awaitWritten(TimeUnit.SECONDS.toNanos(30))).isTrue();
        sender.join();
        assertThat(broker.frames).containsExactly("ack<=1", "ack<=2");
        assertThat(broker.unsettled).isEmpty();
    }
}
