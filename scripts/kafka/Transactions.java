// Kafka's own Java producer writing transactions to partition 0 of a topic, for the
// read-committed tests: rounds alternate commit and abort, ten records each, values
// "committed R I" or "aborted R I". With "open" last, one more transaction of ten records
// ("open I") is left open: the program prints "open" once they are in the log, then waits
// until killed.
//
//   scripts/kafka/broker.sh java scripts/kafka/Transactions.java BOOTSTRAP TOPIC ROUNDS [open]

import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

public class Transactions {
    public static void main(String[] args) throws InterruptedException {
        String bootstrap = args[0];
        String topic = args[1];
        int rounds = Integer.parseInt(args[2]);
        Properties config = new Properties();
        config.put("bootstrap.servers", bootstrap);
        config.put("transactional.id", "ringwire-test-" + topic);
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            producer.initTransactions();
            for (int round = 0; round < rounds; round++) {
                boolean commit = round % 2 == 0;
                producer.beginTransaction();
                for (int i = 0; i < 10; i++) {
                    String value = (commit ? "committed " : "aborted ") + round + " " + i;
                    producer.send(new ProducerRecord<>(topic, 0, null, value));
                }
                // In the log before the end marker, aborted or not (an abort drops what is
                // still unsent).
                producer.flush();
                if (commit) {
                    producer.commitTransaction();
                } else {
                    producer.abortTransaction();
                }
            }
            if (args.length > 3 && args[3].equals("open")) {
                producer.beginTransaction();
                for (int i = 0; i < 10; i++) {
                    producer.send(new ProducerRecord<>(topic, 0, null, "open " + i));
                }
                producer.flush();
                System.out.println("open");
                System.out.flush();
                Thread.sleep(600_000);
            }
        }
    }
}
