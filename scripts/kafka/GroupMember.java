// Kafka's own Java consumer as a member of a consumer group on the consumer protocol
// (KIP-848, group.protocol=consumer), for the group tests: it subscribes to a topic, prints
// "partition:value" for each record until it has read COUNT, commits, and leaves.
//
//   scripts/kafka/broker.sh java scripts/kafka/GroupMember.java BOOTSTRAP TOPIC GROUP COUNT

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;

public class GroupMember {
    public static void main(String[] args) {
        String bootstrap = args[0];
        String topic = args[1];
        String group = args[2];
        int count = Integer.parseInt(args[3]);
        Properties config = new Properties();
        config.put("bootstrap.servers", bootstrap);
        config.put("group.id", group);
        config.put("group.protocol", "consumer");
        config.put("auto.offset.reset", "earliest");
        config.put("enable.auto.commit", "false");
        try (KafkaConsumer<String, String> consumer =
                new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(topic));
            int read = 0;
            long deadline = System.currentTimeMillis() + 60_000;
            while (read < count && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    System.out.println(record.partition() + ":" + record.value());
                    read++;
                }
            }
            System.out.flush();
            consumer.commitSync();
        }
    }
}
